import { describe, expect, it } from "vitest";
import { headerValue } from "../../src/answers/header-value.ts";

describe("headerValue", () => {
  it("returns visible ASCII unchanged, the same string", () => {
    const upstream = "http://shop.tenant-a.svc.cluster.local:8080/a?b=%41";
    expect(headerValue(upstream)).toBe(upstream);
  });

  it("percent-encodes controls, spaces and non-ASCII as UTF-8, keeping existing escapes", () => {
    expect(headerValue(" http://x/a b\tc\r\nd/ü/%41/\u{1F600}")).toBe(
      "%20http://x/a%20b%09c%0D%0Ad/%C3%BC/%41/%F0%9F%98%80",
    );
  });

  it("encodes a lone surrogate as U+FFFD instead of throwing", () => {
    expect(headerValue("x\uD800y")).toBe("x%EF%BF%BDy");
  });
});
