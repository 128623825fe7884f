/**
 * Reading and writing through a descriptor, whole: the few loops the file writer and the
 * archive share (a write or a read may do less than asked).
 */
import { fstatSync, ftruncateSync, readSync, writeSync } from "node:fs";

/** Writes all of `data` at the descriptor's position. */
export function writeAll(fd: number, data: Uint8Array): void {
  let written = 0;
  while (written < data.length) written += writeSync(fd, data, written, data.length - written);
}

/** The bytes of `fd` from `start` to `end` (fewer when the file ends first). */
export function readRange(fd: number, start: number, end: number): Buffer {
  const bytes = Buffer.alloc(end - start);
  let done = 0;
  while (done < bytes.length) {
    const n = readSync(fd, bytes, done, bytes.length - done, start + done);
    if (n === 0) return bytes.subarray(0, done);
    done += n;
  }
  return bytes;
}

/**
 * Cuts `bytes`, just written, off the end of the file open as `fd` (for reading too) when they are
 * still its last bytes, that is when no other program appended after them; true when it did. A
 * write torn by a full disk is taken back this way, and the file is as it was before it.
 */
export function takeBack(fd: number, bytes: Uint8Array): boolean {
  try {
    const size = fstatSync(fd).size;
    if (size < bytes.length || !readRange(fd, size - bytes.length, size).equals(bytes)) return false;
    ftruncateSync(fd, size - bytes.length);
    return true;
  } catch {
    return false;
  }
}

/** Blocks the thread for `ms` milliseconds: a rewrite waits for another writer's line to end. */
export const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
