// Visible ASCII, '!' (0x21) to '~' (0x7e): the one rule for what a header value, a Host and a
// line of the data thread's messages hold as they are.
const NOT_VISIBLE_ASCII = /[^!-~]/;
const NOT_VISIBLE_ASCII_LINES = /[^!-~\n]/;

/** Whether every character of `text` is visible ASCII (true for ""). */
export function isVisibleAscii(text: string): boolean {
  return !NOT_VISIBLE_ASCII.test(text);
}

/** Whether `text` is lines of visible ASCII, `\n` between them. */
export function isVisibleAsciiLines(text: string): boolean {
  return !NOT_VISIBLE_ASCII_LINES.test(text);
}

/**
 * A string as a valid HTTP header value: unchanged when it is visible ASCII, else with every
 * other character (spaces included) percent-encoded as UTF-8, as a URL serialiser would. The
 * Registry accepts any string as `upstream`; Node throws on a header value with a control
 * character, which would turn a routed answer into a 500.
 */
export function headerValue(value: string): string {
  return isVisibleAscii(value) ? value : percentEncode(value);
}

function percentEncode(value: string): string {
  let out = "";
  for (const ch of value) {
    if (isVisibleAscii(ch)) out += ch;
    // Buffer encodes a lone surrogate as U+FFFD rather than throwing.
    else
      for (const byte of Buffer.from(ch, "utf8"))
        out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
