// The crt-list a zero-hop HAProxy starts with in a scratch directory: the shipped one, its
// default certificate made there as the shipped init step makes it, and, for a comparison with
// pushed certificates, a view's certificates as files listed after it.

import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { crtListLines } from "../../src/push/haproxy-certificates.ts";
import type { PushView } from "../../src/snapshot/types.ts";
import { writeDefaultCertificate } from "./certificates.ts";

const SHIPPED = "manifests/data-planes/haproxy/zero-hop/replica-mirror.crt-list";

/**
 * Makes `dir`/default.pem (and its key, default.pem.key) and, for `view`, each of its
 * certificates at the name a push would give it (haproxy-certificates.ts); the content of the
 * crt-list `crtList` that lists them: the shipped one, then one line per certificate.
 */
export async function crtListFiles(
  dir: string,
  crtList: string,
  view: PushView | undefined,
): Promise<string> {
  const pem = join(dir, "default.pem");
  // The shipped init step (examples/zero-hop): the image's `default-certificate`.
  await writeDefaultCertificate(pem);
  const shipped = (await readFile(SHIPPED, "utf8")).replace(
    "/usr/local/etc/haproxy/default.pem",
    pem,
  );
  const lines = view === undefined ? [] : crtListLines(crtList)(view);
  for (const line of lines) {
    await mkdir(dirname(line.name), { recursive: true });
    const { chain, key } = line.certificate;
    await writeFile(line.name, `${chain}\n${key}`, { mode: 0o600 });
  }
  return `${shipped}${lines.map((l) => `${l.line}\n`).join("")}`;
}
