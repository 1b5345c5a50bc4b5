// `replica-mirror default-certificate --out PATH`: writes a new self-signed certificate and its
// key, one PEM file (mode 0600), for a proxy's default certificate (ADR 56). Run by the shipped
// manifests as an init step into a memory volume the proxy reads: a new key per pod, never one
// in the repository or an image. HAProxy, nginx and Caddy all read the certificate and the key
// from the one file.

import { writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { selfSigned } from "./self-signed.ts";

const USAGE = "default-certificate --out PATH [--days N] [--common-name NAME]";

/** Runs the command; resolves to the exit status. */
export async function runDefaultCertificate(
  args: readonly string[],
  out: (line: string) => void,
  fail: (line: string) => void,
): Promise<number> {
  let values: { out?: string; days?: string; "common-name"?: string };
  try {
    values = parseArgs({
      args: [...args],
      options: {
        out: { type: "string" },
        days: { type: "string" },
        "common-name": { type: "string" },
      },
      strict: true,
    }).values;
  } catch (e) {
    fail(`${(e as Error).message} (usage: ${USAGE})`);
    return 2;
  }
  const days = Number(values.days ?? "3650");
  if (values.out === undefined || !Number.isInteger(days) || days < 1 || days > 36_500) {
    fail(`usage: ${USAGE} (days: 1 to 36500)`);
    return 2;
  }
  const made = selfSigned(values["common-name"] ?? "replica-mirror-default", new Date(), days);
  try {
    await writeFile(values.out, `${made.certificate}${made.key}`, { mode: 0o600, flag: "w" });
  } catch (e) {
    fail(`cannot write ${values.out}: ${(e as NodeJS.ErrnoException).code ?? "error"}`);
    return 1;
  }
  out(`wrote a self-signed certificate and its key to ${values.out}, valid ${days} days`);
  return 0;
}
