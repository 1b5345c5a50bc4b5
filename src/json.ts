import { err, ok, type Result } from "./result.ts";

/**
 * Parses JSON text from the outside world. A failure says how long the text was and where it
 * broke, never what it held: V8's message can quote the input, which may be a Secret's.
 */
export function parseJson(
  what: string,
  text: string,
): Result<unknown, { readonly message: string }> {
  try {
    return ok(JSON.parse(text) as unknown);
  } catch (e) {
    const position = e instanceof Error ? /position (\d+)/.exec(e.message)?.[1] : undefined;
    const where = position === undefined ? "" : ` at position ${position}`;
    return err({
      message: `${what} of ${Buffer.byteLength(text)} bytes is not valid JSON${where}`,
    });
  }
}
