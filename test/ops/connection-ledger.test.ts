import { describe, expect, it } from "vitest";
import { ConnectionLedger } from "../../src/ops/connection-ledger.ts";

describe("ConnectionLedger", () => {
  it("admits connections under the cap and closes none", () => {
    const ledger = new ConnectionLedger<string>(3);
    expect([ledger.open("a"), ledger.open("b"), ledger.open("c"), ledger.size]).toEqual([
      undefined,
      undefined,
      undefined,
      3,
    ]);
  });

  it("admits one more at the cap by closing the connection waiting longest", () => {
    const ledger = new ConnectionLedger<string>(3);
    for (const k of ["a", "b", "c"]) ledger.open(k);
    expect([ledger.open("d"), ledger.open("e"), ledger.order(), ledger.size]).toEqual([
      "a",
      "b",
      { waiting: ["c", "d", "e"], busy: [] },
      3,
    ]);
  });

  it("puts a connection back at the end of the line once its request is answered", () => {
    const ledger = new ConnectionLedger<string>(3);
    for (const k of ["a", "b", "c"]) ledger.open(k);
    ledger.requestStarted("a");
    ledger.requestEnded("a");
    expect([ledger.open("d"), ledger.order()]).toEqual([
      "b",
      { waiting: ["c", "a", "d"], busy: [] },
    ]);
  });

  it("closes a connection with a request in flight only when every other one has one", () => {
    const ledger = new ConnectionLedger<string>(2);
    ledger.open("a");
    ledger.open("b");
    ledger.requestStarted("a");
    const first = ledger.open("c");
    ledger.requestStarted("c");
    const second = ledger.open("d");
    expect([first, second, ledger.order()]).toEqual(["b", "a", { waiting: ["d"], busy: ["c"] }]);
  });

  it("keeps a connection busy until its last pipelined request ends", () => {
    const ledger = new ConnectionLedger<string>(2);
    ledger.open("a");
    ledger.requestStarted("a");
    ledger.requestStarted("a");
    ledger.requestEnded("a");
    const during = ledger.order();
    ledger.requestEnded("a");
    expect([during, ledger.order()]).toEqual([
      { waiting: [], busy: ["a"] },
      { waiting: ["a"], busy: [] },
    ]);
  });

  it("forgets what it closed and ignores later news of it", () => {
    const ledger = new ConnectionLedger<string>(1);
    ledger.open("a");
    const closed = ledger.open("b");
    ledger.requestStarted("a");
    ledger.requestEnded("a");
    ledger.closed("a");
    ledger.closed("b");
    ledger.closed("b");
    expect([closed, ledger.order(), ledger.size]).toEqual(["a", { waiting: [], busy: [] }, 0]);
  });

  it("refuses a cap below 1", () => {
    expect(() => new ConnectionLedger<string>(0)).toThrow(RangeError);
  });
});
