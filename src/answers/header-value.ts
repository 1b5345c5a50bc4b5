/**
 * A string as a valid HTTP header value: unchanged when it is visible ASCII, else with every
 * other character (spaces included) percent-encoded as UTF-8, as a URL serialiser would. The
 * Registry accepts any string as `upstream`; Node throws on a header value with a control
 * character, which would turn a routed answer into a 500.
 */
export function headerValue(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return percentEncode(value);
  }
  return value;
}

function percentEncode(value: string): string {
  let out = "";
  for (const ch of value) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x21 && c <= 0x7e) out += ch;
    // Buffer encodes a lone surrogate as U+FFFD rather than throwing.
    else
      for (const byte of Buffer.from(ch, "utf8"))
        out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
