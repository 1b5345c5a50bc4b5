// Shared by the state tests: a state with recognisable random values, a key, a scratch directory
// and file systems that record or fail.

import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { type KeptCertificate, UNKEPT_VALUE } from "../../src/snapshot/types.ts";
import {
  type AppendableFile,
  type FileSystem,
  nodeFileSystem,
  type WritableFile,
} from "../../src/state/file.ts";
import { StateKey } from "../../src/state/key.ts";
import { type State, type StateConfig, stateConfig } from "../../src/state/state.ts";
import { HookSlot } from "../support/hook-slot.ts";

export const CONFIG: StateConfig = stateConfig({
  registryNamespace: "mirror",
  registryName: "registry",
  registryKey: "registry.json",
  secretNamespaces: ["tenant-b", "tenant-a"],
  secretSelector: "replica-mirror/app=true",
});

/** A random byte string of n bytes (one character per byte). */
export const byteString = (n: number): string => randomBytes(n).toString("latin1");

export const newKey = (): StateKey => new StateKey(randomBytes(32));

/** The series of sampleState's generation. */
export const SERIES = "5e7e5e7e5e7e5e7e";

/**
 * A state under CONFIG with `secrets` App Secrets, each value random bytes of `valueBytes`, the
 * `writes`th write (1 unless told) of SERIES.
 */
export function sampleState(
  options: { secrets?: number; valueBytes?: number; savedAt?: number; writes?: number } = {},
): State {
  const n = options.secrets ?? 3;
  const valueBytes = options.valueBytes ?? 48;
  const savedAt = options.savedAt ?? 1_750_000_000_000;
  return {
    savedAt,
    generation: {
      series: SERIES,
      writes: options.writes ?? 1,
      heardAt: Math.max(0, savedAt - 1_000),
    },
    config: CONFIG,
    registry: { present: true, resourceVersion: "41", value: byteString(valueBytes) },
    // In the order a state file keeps them: by namespace, then name.
    secrets: Array.from({ length: n }, (_, i) => ({
      namespace: i % 2 === 0 ? "tenant-a" : "tenant-b",
      name: `app-${String(i).padStart(6, "0")}`,
      resourceVersion: String(100 + i),
      data: { token: byteString(valueBytes), "tls.key": byteString(valueBytes) },
    })).sort((a, b) => a.namespace.localeCompare(b.namespace)),
    watches: {
      registry: "45",
      secrets: [
        { namespace: "tenant-a", resourceVersion: "120" },
        { namespace: "tenant-b", resourceVersion: "121" },
      ],
    },
  };
}

/**
 * A state file of format 1, as the code before ADR 50 wrote it (commit 713a2d5): a state under
 * CONFIG sealed under FORMAT_1_KEY (hex).
 */
export const FORMAT_1_FILE = Buffer.from(
  "Uk1TVEFURQAAAYyHwbw0A6i5BwcHBwcHBwcHBwcHAAACLw9qp6EULbGbtPBy9KJrxbeDL+wF7ZPAbdyBb80x7gIrF3" +
    "TBTrFwxL4gnc6TpH6+BIEzkTuwxmh46ZqYwFfDoZ4kyJVB+alJpG7hFS2O8WK1thp+AtjPJlHNAEUsDUBu+Lr99o/y" +
    "aX/qNl7yBOKlkTjYRfxPAylxAIma0e6sQe0cJeSwfNKa941JV1B4q6f28VE7FeLSC/c8gDuRuQt34oegQPOZea4NVz" +
    "+iLUJl/sQV0AfizO4pFspCgXyq7SidxxddcpkMS9ye0Um9JSZSqw3xcq3i9WvI6F0bvp91wm/FeWOm6ke4Xls6Jpvt" +
    "+drQsrKXYbZUn+pWnKQljUJ47TJMrJSv9wNivg5fFk4Lyme2fvSCMkRUX53zvd6Hmg030iBX3dQJpUlXtshq2uqsQi" +
    "OGOoLfq+1rRVZiSFSLcGvtrwqk8+1mwoNPcHVmazxH5FyglsCHZkz68xLbWnAJsgPjR16PYEaSlr0mXW3ZgvwfvacV" +
    "hwq0j8mKx9WsCX6ep3gGN5wyJIKJdTeJEUakccMzRRndvXShviuMnpDh4wbgOPjpNgAqUAHSTVLCk2VBZxXfs0ZKDX" +
    "Q9ypsnhBbCQUWZbl++wLObQjd5XV5Mlz2jY0LgaD4tXCrhaAPipCpyt4lqP8PhdUPlctOYrto82Dag+oXa15XbKf03" +
    "PHe/9K7slUSWXfCBcOkxnZSp3bDYRCLiaIuLkY01vf8mUNsHIIarxIKKzXwfJj16XMp+1J4HBydkxiB0XFvQb4cVTJ" +
    "4z",
  "base64",
);
export const FORMAT_1_KEY = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

/**
 * A state file of format 2, as the code before ADR 66 wrote it (commit 5bcfc9e): one App Secret
 * per object in the skeleton, under CONFIG, sealed under FORMAT_1_KEY.
 */
export const FORMAT_2_FILE = Buffer.from(
  "Uk1TVEFURQAAAoyHwbw0A6i5BwcHBwcHBwcHBwcHAAACWw9qpBYULbGbtPBy9KJrxreDL+wF7ZPAbdyBb80x7gIr" +
    "F3TBTrFwxL4gmcSTp2W4UtIn3Wvv2iN4+JqIhx6audJwwMdXvK0dpHm+ACXS5ie/5hRwV8THP1GcGF1vRAVv7q/9" +
    "6+yqaS6+eEjxH6n5z2iSAb4GUG8gDIjWyqvpELIEdfOhaJnT+N1eFAdm+rn2/1E7R7nqTKFjzDeWv1R5somuFviW" +
    "daVbQH/yFQku4dEFzEmdi+kpDJwX0Sz1qDOLwwlNP5JSSdvO3grteSJBqVXxc/q9rDTbpRIMqIh90n7EInvHsxGt" +
    "Ql8nN9j4+cyGtKKcLPpS1/sbtPpkhHV/+i12ppborlU5/Q5JFkoP1n66P6+ba1AKD4Hk8c2SnkNhmg5J3ccV5A5W" +
    "o85gzLzkGXXZL8HBraV5AhQ0BA+SZzyyoUmm5rM5ld0OZ0Zwdjpc6FfUyZDAPgG4816YBzVcshX5XhPZcgHLv4Nw" +
    "WiCIvOkf//QlvwSZwoiYhJvtFX6D5CwJOI91b8mUYCiVEUakJIZhRAuM9DWhviyQydjZ/XLrK+blKh5pCUbBR0CU" +
    "2ilEaBWT8F49dCQs1p83mFeLIn22YGv9jObAFGUjCA8TgT2jf0bqZD4pTzCmcBv05W0w9JR7cdOmLRK1LfuM+cY+" +
    "0AW2+JfQ3dnDMatjYCfz/d7wyhOWTuWbSfkxjZiQ1uCRDz/pOt3Aw94o8ut4WZYbbp3/ld7Jz2lNbz00Yvlizto2" +
    "y/83P1agtyiu0Zc9tlILb9sjt2bUEqjryxx+e09KZwqwTfUV/7n8gQKrbYlahzgaAGrDekt27RWDs6c=",
  "base64",
);

/** Every Secret byte string a state holds: the Registry value and each App Secret value. */
export function secretValues(state: State): string[] {
  return [
    ...(state.registry.present && state.registry.value !== null ? [state.registry.value] : []),
    ...[...state.secrets].flatMap((s) => Object.values(s.data).filter((v) => v !== UNKEPT_VALUE)),
  ];
}

/** A directory of its own for each test of the calling scope. */
export interface Scratch {
  /** The current test's directory, deleted once the test ends. */
  readonly dir: string;
  /** Where the state file goes in it (`dir/state`). */
  readonly path: string;
}

/** Registers the hooks that give each test of the calling file or `describe` a fresh Scratch. */
export function scratchPerTest(): Scratch {
  const dir = new HookSlot<string>("a Scratch");
  beforeEach(() => dir.set(mkdtempSync(join(tmpdir(), "state-test-"))));
  afterEach(() => {
    if (dir.current !== undefined) rmSync(dir.current, { recursive: true, force: true });
    dir.set(undefined);
  });
  return {
    get dir() {
      return dir.value;
    },
    get path() {
      return join(dir.value, "state");
    },
  };
}

/** The stage of an atomic write a failing file system fails at. */
export type FailAt = "create" | "write" | "sync" | "rename" | "syncDirectory";

/**
 * node:fs, failing at `failAt` with ENOSPC; a failed write first writes half of its data, as a
 * full disk would. `written` records every buffer that reached a file.
 */
export function recordingFileSystem(failAt?: FailAt): FileSystem & { written: Buffer[] } {
  const written: Buffer[] = [];
  const fail = (): never => {
    throw Object.assign(new Error("ENOSPC: no space left on device"), {
      code: "ENOSPC",
      syscall: "write",
    });
  };
  // A file's writes recorded, and failing as `failAt` says: created or opened to append alike.
  const recorded = (file: Pick<WritableFile, "writeAll" | "sync">) => ({
    async writeAll(data: Uint8Array) {
      written.push(Buffer.from(data));
      if (failAt === "write") {
        await file.writeAll(data.subarray(0, data.length >> 1));
        fail();
      }
      await file.writeAll(data);
    },
    async sync() {
      if (failAt === "sync") fail();
      await file.sync();
    },
  });
  return {
    written,
    async create(path, mode) {
      if (failAt === "create") fail();
      const file: WritableFile = await nodeFileSystem.create(path, mode);
      return { ...recorded(file), chmod: (m) => file.chmod(m), close: () => file.close() };
    },
    async rename(from, to) {
      if (failAt === "rename") fail();
      await nodeFileSystem.rename(from, to);
    },
    unlink: (path) => nodeFileSystem.unlink(path),
    list: (directory) => nodeFileSystem.list(directory),
    async syncDirectory(path) {
      if (failAt === "syncDirectory") fail();
      await nodeFileSystem.syncDirectory(path);
    },
    async openAppend(path) {
      const file = await nodeFileSystem.openAppend(path);
      return { ...file, ...recorded(file) };
    },
  };
}

/** An in-memory file system whose calls settle at once; `files` holds what was renamed in place. */
export function memoryFileSystem(): FileSystem & {
  readonly files: Map<string, Buffer>;
  failNext: boolean;
} {
  const files = new Map<string, Buffer>();
  const temporary = new Map<string, Buffer>();
  const fs = {
    files,
    failNext: false,
    async create(path: string): Promise<WritableFile> {
      if (fs.failNext) {
        fs.failNext = false;
        throw Object.assign(new Error("EIO: i/o error"), { code: "EIO", syscall: "open" });
      }
      temporary.set(path, Buffer.alloc(0));
      return {
        writeAll: async (data) => {
          temporary.set(path, Buffer.concat([temporary.get(path) ?? Buffer.alloc(0), data]));
        },
        chmod: async () => undefined,
        sync: async () => undefined,
        close: async () => undefined,
      };
    },
    async rename(from: string, to: string) {
      const data = temporary.get(from);
      if (data === undefined) throw new Error(`no temporary ${from}`);
      temporary.delete(from);
      files.set(to, data);
    },
    async unlink(path: string) {
      temporary.delete(path);
    },
    async list() {
      return [] as string[];
    },
    async syncDirectory() {},
    async openAppend(path: string): Promise<AppendableFile> {
      if (fs.failNext) {
        fs.failNext = false;
        throw Object.assign(new Error("EIO: i/o error"), { code: "EIO", syscall: "open" });
      }
      if (!files.has(path))
        throw Object.assign(new Error("ENOENT: no such file"), { code: "ENOENT", syscall: "open" });
      return {
        size: async () => files.get(path)?.length ?? 0,
        writeAll: async (data) => {
          files.set(path, Buffer.concat([files.get(path) ?? Buffer.alloc(0), data]));
        },
        sync: async () => undefined,
        close: async () => undefined,
      };
    },
  };
  return fs;
}

/** A kept certificate: its PEM text is not checked here, only carried. */
export const keptCertificate = (app: string, serial: string): KeptCertificate => ({
  app,
  hostnames: [`${app}.example.com`, `*.${app}.example.com`],
  secretRef: { namespace: "tenant-a", name: `${app}-tls` },
  served: {
    chain: `-----BEGIN CERTIFICATE-----\n${serial}\n-----END CERTIFICATE-----\n`,
    key: "-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n",
    id: "0011223344556677",
    serial,
    notBefore: 1_700_000_000_000,
    notAfter: 1_800_000_000_000,
    resourceVersion: "42",
  },
});
