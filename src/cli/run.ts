import type { Worker } from "node:worker_threads";
import packageJson from "../../package.json" with { type: "json" };
import { commandOf } from "./command.ts";
import { parseServeConfig } from "./config.ts";
import { runDefaultCertificate } from "./default-certificate.ts";
import { serveHelp } from "./flags.ts";
import { runServe } from "./serve.ts";
import { runValidate } from "./validate.ts";

const USAGE = `Usage: replica-mirror <command> [flags]

Commands:
  serve                    run the sidecar (the default command); serve --help lists its flags
  registry validate FILE [--namespace NS] [--allow-local-upstreams true|false]
                           check a Registry document as the mirror would
  default-certificate --out PATH [--days N]
                           write a new self-signed certificate and key (a proxy's default one)
  --version                print the version`;

const print = (line: string) => process.stdout.write(`${line}\n`);
const fail = (line: string) => process.stderr.write(`replica-mirror: ${line}\n`);

/**
 * Runs one command; resolves to the exit status. `dataWorker`: the data thread's worker, spawned
 * by the entry before this module loaded; `serve` spawns one itself without it.
 */
export async function main(
  argv: readonly string[],
  options: { readonly dataWorker?: Worker } = {},
): Promise<number> {
  const { command, rest } = commandOf(argv);
  switch (command) {
    case "--help":
    case "help":
      print(USAGE);
      return 0;
    case "--version":
      print(version());
      return 0;
    case "serve": {
      if (rest.includes("--help")) {
        print(serveHelp());
        return 0;
      }
      const config = parseServeConfig(rest, process.env);
      if (!config.ok) {
        fail(config.error);
        return 2;
      }
      return runServe(config.value, options.dataWorker);
    }
    case "registry":
      if (rest[0] === "validate") return runValidate(rest.slice(1), print);
      fail(`unknown registry command '${rest[0] ?? ""}' (try: registry validate FILE)`);
      return 2;
    case "default-certificate":
      return runDefaultCertificate(rest, print, fail);
    default:
      fail(`unknown command '${command}'\n${USAGE}`);
      return 2;
  }
}

function version(): string {
  return packageJson.version;
}
