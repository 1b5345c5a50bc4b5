import { describe, expect, it } from "vitest";
import { dataListenerLimits, isLoopbackHost } from "../../src/route/listener-limits.ts";

describe("isLoopbackHost", () => {
  it("takes 127.0.0.0/8, ::1 and localhost for loopback, and nothing else", () => {
    const hosts = [
      "127.0.0.1",
      "127.255.0.9",
      "::1",
      "::ffff:127.0.0.1",
      "LOCALHOST",
      "0.0.0.0",
      "::",
      "10.0.0.1",
      "128.0.0.1",
      "127.0.0.1.example.com",
      "",
    ];
    expect(hosts.map((h) => [h, isLoopbackHost(h)])).toEqual([
      ["127.0.0.1", true],
      ["127.255.0.9", true],
      ["::1", true],
      ["::ffff:127.0.0.1", true],
      ["LOCALHOST", true],
      ["0.0.0.0", false],
      ["::", false],
      ["10.0.0.1", false],
      ["128.0.0.1", false],
      ["127.0.0.1.example.com", false],
      ["", false],
    ]);
  });
});

describe("dataListenerLimits", () => {
  const flags = { maxConnections: 1024, headersTimeoutSeconds: 10, idleTimeoutSeconds: undefined };

  it("keeps no idle timeout on loopback (ADR 26) and closes idle connections elsewhere", () => {
    expect({
      loopback: dataListenerLimits({ ...flags, host: "127.0.0.1" }),
      remote: dataListenerLimits({ ...flags, host: "0.0.0.0" }),
    }).toEqual({
      loopback: {
        maxConnections: 1024,
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        idleTimeoutMs: 0,
        checkIntervalMs: 1_000,
      },
      remote: {
        maxConnections: 1024,
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        idleTimeoutMs: 30_000,
        checkIntervalMs: 1_000,
      },
    });
  });

  it("takes an idle timeout given on loopback, and keeps the request timeout above the headers'", () => {
    expect(
      dataListenerLimits({
        host: "127.0.0.1",
        maxConnections: 8,
        headersTimeoutSeconds: 60,
        idleTimeoutSeconds: 2,
      }),
    ).toEqual({
      maxConnections: 8,
      headersTimeoutMs: 60_000,
      requestTimeoutMs: 60_000,
      idleTimeoutMs: 2_000,
      checkIntervalMs: 1_000,
    });
  });
});
