import { describe, expect, it } from "vitest";
import { ROUTED_REQUEST, requestHost } from "../../src/answers/host-header.ts";

describe("requestHost", () => {
  it.each<[string, [string, string][], string | null | typeof ROUTED_REQUEST]>([
    ["Host alone", [["Host", "shop.example.com:8080"]], "shop.example.com:8080"],
    ["no host at all", [], null],
    [
      "X-Forwarded-Host over Host",
      [
        ["Host", "127.0.0.1:8080"],
        ["X-Forwarded-Host", "shop.example.com"],
      ],
      "shop.example.com",
    ],
    [
      "the first of a list, trimmed",
      [["X-Forwarded-Host", "  a.example.com ,b.example.com"]],
      "a.example.com",
    ],
    [
      "the first of repeated X-Forwarded-Host lines",
      [
        ["X-Forwarded-Host", "a.example.com"],
        ["X-Forwarded-Host", "b.example.com"],
      ],
      "a.example.com",
    ],
    [
      "an empty X-Forwarded-Host, not Host",
      [
        ["Host", "shop.example.com"],
        ["X-Forwarded-Host", ""],
      ],
      "",
    ],
    [
      "two Host lines, whatever their case",
      [
        ["Host", "a.example.com"],
        ["HOST", "b.example.com"],
      ],
      null,
    ],
    [
      "two Host lines even with X-Forwarded-Host",
      [
        ["host", "a.example.com"],
        ["host", "a.example.com"],
        ["x-forwarded-host", "a.example.com"],
      ],
      null,
    ],
    [
      "header names in any case",
      [
        ["hOsT", "127.0.0.1:8080"],
        ["X-FORWARDED-host", "shop.example.com"],
      ],
      "shop.example.com",
    ],
    [
      "names that only look alike",
      [
        ["Hosts", "a.example.com"],
        ["X-Forwarded-Hosts", "b.example.com"],
        ["X-Forwarded_Host", "c.example.com"],
        ["Host", "d.example.com"],
      ],
      "d.example.com",
    ],
    ["a UTF-8 name as Node decodes it (latin1)", [["Host", "bÃ¼cher.example.com"]], null],
    ["a control character", [["Host", "shop\u0000.example.com"]], null],
    ["a space inside", [["X-Forwarded-Host", "shop example.com"]], null],
    [
      "x-mirror-app, whatever its case, value and place: a data plane routed the request",
      [
        ["Host", "shop.example.com"],
        ["X-MIRROR-App", ""],
      ],
      ROUTED_REQUEST,
    ],
    [
      "x-mirror-app after two Host lines",
      [
        ["Host", "a.example.com"],
        ["Host", "b.example.com"],
        ["x-mirror-app", "a"],
      ],
      ROUTED_REQUEST,
    ],
    [
      "x-mirror-app before X-Forwarded-Host",
      [
        ["x-mirror-app", "a"],
        ["X-Forwarded-Host", "shop.example.com"],
      ],
      ROUTED_REQUEST,
    ],
    [
      "names like x-mirror-app",
      [
        ["x-mirror-apps", "a"],
        ["x-mirror-ap", "a"],
        ["x-mirror-upstream", "a"],
        ["Host", "shop.example.com"],
      ],
      "shop.example.com",
    ],
  ])("%s", (_case, lines, expected) => {
    expect(requestHost(lines.flat())).toBe(expected);
  });

  it("takes an absolute-form target's authority over Host, X-Forwarded-Host over both", () => {
    const cases: [string, [string, string][], string, string | null][] = [
      [
        "the authority over Host",
        [["Host", "other.example.com"]],
        "shop.example.com",
        "shop.example.com",
      ],
      ["the authority without Host", [], "shop.example.com:8080", "shop.example.com:8080"],
      [
        "X-Forwarded-Host over the authority",
        [
          ["Host", "other.example.com"],
          ["X-Forwarded-Host", "blog.example.com"],
        ],
        "shop.example.com",
        "blog.example.com",
      ],
      ["an empty authority", [["Host", "shop.example.com"]], "", ""],
      [
        "two Host lines, whatever the authority",
        [
          ["Host", "a.example.com"],
          ["Host", "a.example.com"],
        ],
        "a.example.com",
        null,
      ],
    ];
    expect(cases.map(([c, lines, authority]) => [c, requestHost(lines.flat(), authority)])).toEqual(
      cases.map(([c, , , expected]) => [c, expected]),
    );
  });
});
