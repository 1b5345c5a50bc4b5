// Preloaded (`--expose-gc --import`) into the one replica of the memory scenario: answers "held"
// on the IPC channel with its RSS and heap after collections that also give free heap pages back
// to the system. After ordinary collections V8 keeps the pages a burst of garbage made it grow
// into, so the RSS would still count the initial list's garbage, not what the replica holds.

const gc = (globalThis as { gc?: (options?: object) => void }).gc;

process.on("message", async (message) => {
  if (message !== "held" || process.send === undefined || gc === undefined) return;
  for (let i = 0; i < 2; i++) {
    gc({ type: "major", execution: "sync", flavor: "last-resort" });
    await new Promise((r) => setImmediate(r));
  }
  const m = process.memoryUsage();
  process.send({ rss: m.rss, heapUsed: m.heapUsed });
});
// Added after the listener (which refs the channel): the probe must not keep the process alive.
process.channel?.unref();
