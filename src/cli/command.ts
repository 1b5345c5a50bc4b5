/**
 * The command of a command line and its own arguments: `serve` when none is named, or when the
 * line starts with a flag other than `--help` and `--version`.
 */
export function commandOf(argv: readonly string[]): { command: string; rest: string[] } {
  const [command = "serve", ...rest] =
    argv[0]?.startsWith("--") && argv[0] !== "--help" && argv[0] !== "--version"
      ? ["serve", ...argv]
      : argv;
  return { command, rest };
}

/** Whether the command line runs the sidecar (and not only its help). */
export function servesSidecar(argv: readonly string[]): boolean {
  const { command, rest } = commandOf(argv);
  return command === "serve" && !rest.includes("--help");
}
