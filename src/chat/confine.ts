/**
 * Opening files for the chat's tools so that what is checked is what is used (docs/ARCHITECTURE.md,
 * layer 10: `chat/` tools confined to a directory). Checking a path and then using the path again
 * loses to anyone who swaps a symlink in between: the read or write lands wherever the symlink
 * points at that moment. So a path is first checked by its text and its real path
 * (`resolveUnder`, which gives the model readable refusals), then opened without following a
 * final symlink (O_NOFOLLOW) and without blocking (O_NONBLOCK: a named pipe cannot stall the
 * open), and the open descriptor itself is verified before a byte is read or written, through
 * that descriptor only:
 * - on Linux its real path, as the kernel reports it at /proc/self/fd/N, lies inside the working
 *   directory: this covers every component of the path, intermediate directories included;
 * - it is the same file (dev, ino) as the path that was opened;
 * - it is a regular file (or, for read, a directory) with one link: a hard link is another name
 *   for a file that may be outside, and its content is that file's.
 * New files and missing directories are created with O_EXCL relative to a verified directory
 * descriptor (on Linux through /proc/self/fd/N/name, the equivalent of openat), never by a path
 * that could be swapped.
 * Elsewhere (macOS and the BSDs: no /proc, and Node exposes neither openat nor F_GETPATH) the
 * best check available is made: the path is resolved again after the open and must still lie
 * inside and name the same file. That narrows the window to the moment between the open and the
 * second check but cannot close it, and intermediate directories are named by path there.
 */
import { constants, lstatSync, realpathSync, type Stats } from "node:fs";
import { type FileHandle, lstat, mkdir, open, readdir, readlink, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** A refused path or a failed edit: the message goes back to the model as the tool's error. */
export class ToolInputError extends Error {
  override name = "ToolInputError";
}

// Absent on Windows (no symlink swap of this kind to guard against there): 0 leaves them out.
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_NOCTTY = constants.O_NOCTTY ?? 0;
const READ_FLAGS = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const DIR_FLAGS = constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;
const WRITE_FLAGS = constants.O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const EDIT_FLAGS = constants.O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const CREATE_FLAGS = WRITE_FLAGS | constants.O_CREAT | constants.O_EXCL;
const CHUNK = 1024 * 1024;

/** Whether `target` is `root` or below it, by path text alone (both absolute, normalized). */
export function isInside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/**
 * The absolute path for a path the model gave, refusing anything outside `cwd`: `..` escapes,
 * absolute paths elsewhere, and symlinks (anywhere along the path) that point out of it. For a
 * file that does not exist yet, its nearest existing ancestor is checked. This is the check by
 * path, and a path can change right after it: the tools also verify what they open (see above).
 */
export function resolveInside(cwd: string, path: string): string {
  return resolveUnder(realpathSync(cwd), path);
}

/** resolveInside for a working directory whose real path is `root`. */
export function resolveUnder(root: string, path: string): string {
  if (typeof path !== "string" || path.trim() === "") throw new ToolInputError("path is empty: give a path relative to the working directory");
  if (path.includes("\0")) throw new ToolInputError("path contains a NUL byte");
  const target = resolve(root, path);
  if (!isInside(root, target)) {
    throw new ToolInputError(`${path} is outside the working directory ${root}: only paths inside it can be used`);
  }
  // lstat, not exists: a dangling symlink "does not exist" but writing through it lands elsewhere.
  let existing = target;
  while (!lexists(existing) && existing !== root) existing = dirname(existing);
  let real: string;
  try {
    real = realpathSync(existing);
  } catch {
    throw new ToolInputError(`${path} goes through a symlink that points nowhere (${existing}): only paths inside the working directory can be used`);
  }
  if (!isInside(root, real)) {
    throw new ToolInputError(`${path} leads outside the working directory through a symlink (${real}): only paths inside it can be used`);
  }
  return target;
}

function lexists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

const code = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code;

function kindOf(st: Stats): string {
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a named pipe (FIFO)";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSymbolicLink()) return "a symlink";
  return "not a file";
}

const notRegular = (path: string, st: Stats) => new ToolInputError(`${path} is not a regular file (${kindOf(st)}): only regular files can be read, written or edited`);
const changed = (path: string, what: string) =>
  new ToolInputError(`${path} changed while it was being opened (${what}): nothing was read or written; try again`);

/**
 * The real path of an open descriptor, as the kernel knows it (Linux, /proc mounted), or
 * undefined where there is no such thing. macOS has fcntl(F_GETPATH), which Node does not expose.
 */
async function descriptorPath(handle: FileHandle): Promise<string | undefined> {
  if (process.platform !== "linux") return undefined;
  try {
    return await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return undefined;
  }
}

/** An open, verified directory inside the working directory. */
interface Dir {
  handle: FileHandle;
  /** the path it was opened by, resolved when it was checked */
  real: string;
  /** whether children can be named through the descriptor (/proc/self/fd/N/name) */
  byDescriptor: boolean;
}

/** The name of `name` inside `dir`: through the descriptor where the system allows it. */
const child = (dir: Dir, name: string) => (dir.byDescriptor ? `/proc/self/fd/${dir.handle.fd}/${name}` : join(dir.real, name));

/**
 * Verifies an opened descriptor: inside `root` (by its kernel path, or where there is none by
 * resolving `opened` again, which narrows the window but cannot close it), the same file as
 * `opened` names now, and of the wanted kind. Returns its stat and whether its kernel path is known.
 */
async function verify(
  handle: FileHandle,
  root: string,
  path: string,
  opened: string,
  want: "file" | "directory" | "either",
  verb: "read" | "written",
): Promise<{ st: Stats; byDescriptor: boolean }> {
  const st = await handle.stat();
  const real = await descriptorPath(handle);
  if (real !== undefined) {
    if (!isInside(root, real)) {
      throw new ToolInputError(`${path} leads outside the working directory (${real}): only paths inside it can be used`);
    }
  } else {
    const again = await realpath(opened).catch(() => undefined);
    if (again === undefined || !isInside(root, again)) throw changed(path, "it no longer resolves inside the working directory");
    const now = await stat(again).catch(() => undefined);
    if (!now || now.dev !== st.dev || now.ino !== st.ino) throw changed(path, "another file is there now");
  }
  const named = await lstat(opened).catch(() => undefined);
  if (!named || named.dev !== st.dev || named.ino !== st.ino) throw changed(path, "another file is there now");
  if (st.isDirectory()) {
    if (want === "file") throw notRegular(path, st);
  } else if (!st.isFile() || want === "directory") {
    throw want === "directory" ? new ToolInputError(`${path}: ${opened} is not a directory`) : notRegular(path, st);
  } else if (st.nlink > 1) {
    const why =
      verb === "read"
        ? "its content may be a file outside the working directory, so it is not read"
        : "writing it would change that other file too, which may be outside the working directory, so it is not written";
    throw new ToolInputError(`${path} has ${st.nlink} hard links: ${why}`);
  }
  return { st, byDescriptor: real !== undefined };
}

/** Opens `at` with `flags`, turning the refusals of the open itself into messages for the model. */
async function openChecked(at: string, flags: number, path: string, mode?: number): Promise<FileHandle> {
  try {
    return await open(at, flags, mode);
  } catch (error) {
    const c = code(error);
    // ELOOP: the last component became a symlink after it was checked (O_NOFOLLOW refused it).
    if (c === "ELOOP" || c === "EMLINK") throw changed(path, "a symlink appeared");
    // ENXIO: a named pipe with no reader, or a socket; O_NONBLOCK made the open fail, not block.
    if (c === "ENXIO" || c === "EOPNOTSUPP") throw new ToolInputError(`${path} is not a regular file (a named pipe (FIFO) or a socket): only regular files can be read, written or edited`);
    if (c === "EISDIR") throw new ToolInputError(`${path} is a directory: give a file`);
    throw error;
  }
}

/** Refuses anything but a file or directory before opening it (a device is never opened). */
async function precheck(at: string, path: string): Promise<Stats | undefined> {
  const st = await lstat(at).catch((error) => {
    if (code(error) === "ENOENT") return undefined;
    throw error;
  });
  if (st && !st.isFile() && !st.isDirectory() && !st.isSymbolicLink()) throw notRegular(path, st);
  return st;
}

export interface OpenedForRead {
  handle: FileHandle;
  stat: Stats;
  /** lists the directory the descriptor is (only when stat.isDirectory()) */
  list(): Promise<string[]>;
}

/** Opens an existing file or directory for reading, verified (see above). The caller closes it. */
export async function openForRead(root: string, path: string): Promise<OpenedForRead> {
  const target = resolveUnder(root, path);
  const real = await realpath(target).catch((error) => {
    if (code(error) === "ENOENT") throw new ToolInputError(`${path} does not exist`);
    throw error;
  });
  if (!isInside(root, real)) throw changed(path, "it now resolves outside the working directory");
  await precheck(real, path);
  const handle = await openChecked(real, READ_FLAGS, path);
  try {
    const { st, byDescriptor } = await verify(handle, root, path, real, "either", "read");
    const list = async () => {
      const entries = await readdir(byDescriptor ? `/proc/self/fd/${handle.fd}` : real, { withFileTypes: true });
      return entries.map((d) => (d.isDirectory() ? `${d.name}/` : d.name));
    };
    return { handle, stat: st, list };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Reads the rest of a descriptor in chunks, off the event loop, stopping when `signal` aborts. */
export async function readAll(handle: FileHandle, signal?: AbortSignal): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    if (signal?.aborted) throw new Error("read stopped: the run was stopped");
    const buffer = Buffer.allocUnsafe(CHUNK);
    const { bytesRead } = await handle.read(buffer, 0, CHUNK, total);
    if (bytesRead === 0) break;
    chunks.push(bytesRead === CHUNK ? buffer : buffer.subarray(0, bytesRead));
    total += bytesRead;
  }
  return Buffer.concat(chunks, total);
}

/** Replaces the whole content of a verified descriptor, in place (mode and owner stay). */
export async function replaceContent(handle: FileHandle, data: Buffer): Promise<void> {
  await handle.truncate(0);
  let at = 0;
  while (at < data.length) {
    const { bytesWritten } = await handle.write(data, at, data.length - at, at);
    at += bytesWritten;
  }
}

/** Opens an existing regular file for reading and writing (edit), verified. The caller closes it. */
export async function openForEdit(root: string, path: string): Promise<FileHandle> {
  const target = resolveUnder(root, path);
  if (!lexists(target)) throw new ToolInputError(`${path} does not exist: use write to create it`);
  const real = await realpath(target);
  if (!isInside(root, real)) throw changed(path, "it now resolves outside the working directory");
  await precheck(real, path);
  return verifiedForWriting(await openChecked(real, EDIT_FLAGS, path), root, path, real);
}

/** The opened handle once verify() accepts it as a file to write; closed when it does not. */
async function verifiedForWriting(handle: FileHandle, root: string, path: string, opened: string): Promise<FileHandle> {
  try {
    await verify(handle, root, path, opened, "file", "written");
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

async function openDir(root: string, at: string, path: string): Promise<Dir> {
  let handle: FileHandle;
  try {
    handle = await open(at, DIR_FLAGS);
  } catch (error) {
    const c = code(error);
    if (c === "ELOOP") throw changed(path, "a symlink appeared");
    if (c === "ENOTDIR") throw new ToolInputError(`${path}: a part of it is not a directory`);
    throw error;
  }
  try {
    const { byDescriptor } = await verify(handle, root, path, at, "directory", "written");
    return { handle, real: at, byDescriptor };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Opens (or creates) a regular file for writing, verified, creating missing directories on the
 * way; the caller replaces its content and closes it. Nothing is truncated before the checks.
 */
export async function openForWrite(root: string, path: string): Promise<FileHandle> {
  const target = resolveUnder(root, path);
  let start: string;
  let names: string[];
  if (lexists(target)) {
    const real = await realpath(target);
    if (real === root) throw new ToolInputError(`${path} is a directory: give a file`);
    start = dirname(real);
    names = [relative(start, real)];
  } else {
    let existing = dirname(target);
    while (!lexists(existing) && existing !== root) existing = dirname(existing);
    start = await realpath(existing);
    names = relative(existing, target).split(sep);
  }
  if (!isInside(root, start)) throw changed(path, "it now resolves outside the working directory");
  const base = names.pop()!;
  let dir = await openDir(root, start, path);
  try {
    for (const name of names) {
      const at = child(dir, name);
      await mkdir(at).catch((error) => {
        if (code(error) !== "EEXIST") throw error;
      });
      const next = await openDir(root, at, path);
      await dir.handle.close();
      dir = next;
    }
    return await openFileIn(root, dir, base, path);
  } finally {
    await dir.handle.close();
  }
}

/** The file `base` in a verified directory: the existing one, or a new one made with O_EXCL. */
async function openFileIn(root: string, dir: Dir, base: string, path: string): Promise<FileHandle> {
  const at = child(dir, base);
  // Two rounds: a file that vanishes between the two opens, or appears, is met once more.
  for (let round = 0; round < 2; round++) {
    await precheck(at, path);
    let handle: FileHandle;
    try {
      handle = await openChecked(at, WRITE_FLAGS, path);
    } catch (error) {
      if (code(error) !== "ENOENT") throw error;
      try {
        handle = await openChecked(at, CREATE_FLAGS, path, 0o666);
      } catch (created) {
        if (code(created) === "EEXIST") continue;
        throw created;
      }
    }
    return verifiedForWriting(handle, root, path, at);
  }
  throw changed(path, "it was created and removed meanwhile");
}
