// The state file's I/O: read whole under a size cap; replace atomically. A reader sees the
// previous file or the new one, never a part; a failed write leaves no temporary file behind.

import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, readdir, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { err, ok, type Result } from "../result.ts";

/** Why a file could not be read. */
export interface ReadFileError {
  readonly kind: "missing" | "unreadable" | "too-large";
  readonly message: string;
}

/** Why a file could not be written (or not made durable). */
export interface WriteFileError {
  readonly message: string;
}

const FS_WORDS: Readonly<Record<string, string>> = {
  ENOENT: "does not exist",
  EACCES: "permission denied",
  EISDIR: "is a directory",
  ENOSPC: "no space left on the device",
  EROFS: "read-only file system",
};

/** An fs error as words and its code; never the file's content. */
export function describeFsError(e: unknown): string {
  if (e instanceof Error && "code" in e && typeof e.code === "string") {
    const words = FS_WORDS[e.code];
    const syscall = "syscall" in e && typeof e.syscall === "string" ? ` in ${e.syscall}` : "";
    return `${words === undefined ? "" : `${words}, `}${e.code}${syscall}`;
  }
  return e instanceof Error ? e.message : String(e);
}

const isMissing = (e: unknown): boolean =>
  e instanceof Error && "code" in e && (e.code === "ENOENT" || e.code === "ENOTDIR");

/** The content of the regular file at `path`, if it exists, is readable and holds at most maxBytes. */
export async function readFileCapped(
  path: string,
  maxBytes: number,
): Promise<Result<Buffer, ReadFileError>> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    // Symbolic links are followed: a mounted Secret's key is one (`key -> ..data/key`).
    handle = await open(path, constants.O_RDONLY);
    const stat = await handle.stat();
    if (!stat.isFile())
      return err({ kind: "unreadable", message: `${path} is not a regular file` });
    if (stat.size > maxBytes)
      return err({
        kind: "too-large",
        message: `${path} holds ${stat.size} bytes, more than the ${maxBytes} allowed`,
      });
    // One byte more than the cap tells a file that grew since stat from one that fits.
    const buffer = Buffer.allocUnsafe(stat.size + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === buffer.length) break;
    }
    if (length > maxBytes)
      return err({ kind: "too-large", message: `${path} grew past ${maxBytes} bytes while read` });
    return ok(buffer.subarray(0, length));
  } catch (e) {
    if (isMissing(e)) return err({ kind: "missing", message: `${path} does not exist` });
    return err({ kind: "unreadable", message: `${path}: ${describeFsError(e)}` });
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** The calls an atomic write makes: node:fs by default, a failing double in tests. */
export interface FileSystem {
  /** Creates `path` exclusively with `mode`. */
  create(path: string, mode: number): Promise<WritableFile>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** The names in a directory. */
  list(directory: string): Promise<string[]>;
  /** Makes the directory's entries (a rename) durable. */
  syncDirectory(path: string): Promise<void>;
  /** Opens the existing file at `path` for appending. */
  openAppend(path: string): Promise<AppendableFile>;
}

/** An existing file open for appending. */
export interface AppendableFile {
  /** Its size in bytes now. */
  size(): Promise<number>;
  /** Appends all of data. */
  writeAll(data: Uint8Array): Promise<void>;
  /** Makes what was appended durable (its data, not its times). */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** An open file being written. */
export interface WritableFile {
  /** Writes all of data. */
  writeAll(data: Uint8Array): Promise<void>;
  chmod(mode: number): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** node:fs. */
export const nodeFileSystem: FileSystem = {
  async create(path, mode) {
    const handle = await open(
      path,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
      mode,
    );
    return {
      writeAll: (data) => handle.writeFile(data),
      chmod: (m) => handle.chmod(m),
      sync: () => handle.sync(),
      close: () => handle.close(),
    };
  },
  rename,
  unlink,
  list: (directory) => readdir(directory),
  async syncDirectory(path) {
    const handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
  async openAppend(path) {
    const handle = await open(path, constants.O_WRONLY | constants.O_APPEND);
    return {
      size: async () => (await handle.stat()).size,
      writeAll: (data) => handle.writeFile(data),
      sync: () => handle.datasync(),
      close: () => handle.close(),
    };
  },
};

const TEMPORARY = /\.tmp-[0-9a-f]{16}$/;

/** The name of a new temporary file beside `path`, in the same directory (so rename is atomic). */
const temporaryFor = (path: string): string =>
  join(dirname(path), `.${basename(path)}.tmp-${randomBytes(8).toString("hex")}`);

/**
 * Replaces `path` with `data` (or its pieces, in order, each written before the next is asked
 * for), mode 0600: a temporary file in the same directory, fsync, rename, fsync of the directory.
 * On failure the previous file is intact and the temporary file removed. An error after the
 * rename (the directory's fsync) means the new file is in place, not durable.
 */
export async function writeFileAtomic(
  path: string,
  data: Uint8Array | Iterable<Uint8Array>,
  fs: FileSystem = nodeFileSystem,
): Promise<Result<void, WriteFileError>> {
  const temporary = temporaryFor(path);
  let created = false;
  try {
    const file = await fs.create(temporary, 0o600);
    created = true;
    try {
      // The umask may have cleared bits of 0600: chmod makes the mode exact.
      await file.chmod(0o600);
      for (const piece of data instanceof Uint8Array ? [data] : data) await file.writeAll(piece);
      await file.sync();
    } finally {
      await file.close();
    }
    await fs.rename(temporary, path);
    created = false;
  } catch (e) {
    if (created) await fs.unlink(temporary).catch(() => undefined);
    return err({ message: `writing ${path}: ${describeFsError(e)}` });
  }
  try {
    await fs.syncDirectory(dirname(path));
  } catch (e) {
    return err({ message: `syncing the directory of ${path}: ${describeFsError(e)}` });
  }
  return ok(undefined);
}

/**
 * Removes the temporary files a killed writer left beside `path`. Only one process may write a
 * state file, so any temporary file of it found before that process's first write is stale.
 */
export async function removeStaleTemporaries(
  path: string,
  fs: FileSystem = nodeFileSystem,
): Promise<void> {
  const prefix = `.${basename(path)}.tmp-`;
  const names = await fs.list(dirname(path)).catch(() => [] as string[]);
  for (const name of names) {
    if (name.startsWith(prefix) && TEMPORARY.test(name))
      await fs.unlink(join(dirname(path), name)).catch(() => undefined);
  }
}

/**
 * Appends `data` to the file at `path` and makes it durable, if the file exists and holds
 * `expectedSize` bytes: a file replaced or grown behind the writer's back is left as it is.
 * A failed append may leave part of `data` in the file.
 */
export async function appendToFile(
  path: string,
  data: Uint8Array,
  expectedSize: number,
  fs: FileSystem = nodeFileSystem,
): Promise<Result<void, WriteFileError>> {
  try {
    const file = await fs.openAppend(path);
    try {
      const size = await file.size();
      if (size !== expectedSize)
        return err({
          message: `appending to ${path}: it holds ${size} bytes, not the ${expectedSize} written`,
        });
      await file.writeAll(data);
      await file.sync();
    } finally {
      await file.close();
    }
  } catch (e) {
    return err({ message: `appending to ${path}: ${describeFsError(e)}` });
  }
  return ok(undefined);
}
