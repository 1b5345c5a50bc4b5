// Preloaded (`--expose-gc --import`) into a `replica-mirror serve` child: answers "heap" on the
// IPC channel with the heap after two full collections. It adds nothing else to the process.

const collect = (globalThis as { gc?: () => void }).gc;

process.on("message", (message) => {
  if (message !== "heap" || process.send === undefined) return;
  collect?.();
  collect?.();
  const m = process.memoryUsage();
  process.send({
    heapUsed: m.heapUsed,
    rss: m.rss,
    external: m.external,
    gc: collect !== undefined,
  });
});
// Added after the listener (which refs the channel): the probe must not keep the process alive.
process.channel?.unref();
