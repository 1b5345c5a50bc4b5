import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createLineSplitter, type SplitLine } from "../../src/kube/codec/ndjson.ts";

const texts = (lines: SplitLine[]): string[] =>
  lines.map((l) => (l.kind === "line" ? l.text : `<overlong ${l.bytes}>`));

describe("createLineSplitter", () => {
  it("returns every line of a chunk that carries several", () => {
    const s = createLineSplitter();
    expect(texts(s.push(Buffer.from('{"a":1}\n{"b":2}\n{"c":3}\n')))).toEqual([
      '{"a":1}',
      '{"b":2}',
      '{"c":3}',
    ]);
    expect(s.end()).toEqual([]);
  });

  it("joins a line split across chunks, including inside a multi-byte character", () => {
    const s = createLineSplitter();
    const bytes = Buffer.from('{"name":"caf\u00e9 \u{1F511}"}\n');
    const cut = bytes.indexOf(0xa9); // the second byte of é
    expect(s.push(bytes.subarray(0, cut))).toEqual([]);
    expect(s.push(bytes.subarray(cut))).toEqual([
      { kind: "line", text: '{"name":"caf\u00e9 \u{1F511}"}', bytes: bytes.length - 1 },
    ]);
  });

  it("skips blank lines and strips a CR before the newline", () => {
    const s = createLineSplitter();
    expect(texts(s.push(Buffer.from("\n\r\n{}\r\n  \n")))).toEqual(["{}"]);
  });

  it("hands back an unterminated last line at the end", () => {
    const s = createLineSplitter();
    expect(s.push(Buffer.from('{"a":1}\n{"b"'))).toHaveLength(1);
    expect(texts(s.push(Buffer.from(":2}")))).toEqual([]);
    expect(texts(s.end())).toEqual(['{"b":2}']);
  });

  it("drops a line over the limit without buffering it, then carries on", () => {
    const s = createLineSplitter(8);
    expect(s.push(Buffer.from("0123456"))).toEqual([]);
    expect(s.push(Buffer.from("789abc"))).toEqual([]);
    expect(texts(s.push(Buffer.from("def\nok\n")))).toEqual(["<overlong 16>", "ok"]);
  });

  it("yields the same lines however the bytes are chunked", () => {
    const line = fc.stringMatching(/^[^\n]{0,20}$/).filter((l) => l.trim() !== "");
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (lines, cuts) => {
          const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(""));
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort(
            (a, b) => a - b,
          );
          const s = createLineSplitter();
          const out: SplitLine[] = [];
          let from = 0;
          for (const p of [...points, bytes.length]) {
            out.push(...s.push(bytes.subarray(from, p)));
            from = p;
          }
          out.push(...s.end());
          expect(texts(out)).toEqual(lines.map((l) => l.trim()));
        },
      ),
    );
  });
});
