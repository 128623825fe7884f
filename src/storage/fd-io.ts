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
 * Cuts the file open as `fd` back to `size` bytes when it is `size + written` long: the bytes just
 * written at its end, when no other program appended before or after them (comparing bytes is
 * not enough: another program's newline matches one of ours). True when it did: a write torn by a
 * full disk is taken back, and the file is as it was. Between the look and the cut another
 * program's append could still land (pi takes no lock): a window of microseconds, on a disk
 * that is full for that program too.
 */
export function takeBack(fd: number, size: number, written: number): boolean {
  try {
    if (fstatSync(fd).size !== size + written) return false;
    ftruncateSync(fd, size);
    return true;
  } catch {
    return false;
  }
}

/** Blocks the thread for `ms` milliseconds: a rewrite waits for another writer's line to end. */
export const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
