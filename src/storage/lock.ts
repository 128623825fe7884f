/**
 * One writer per session file: `<file>.lock` holds the writer's pid and host. A lock whose
 * process is gone (same host, pid not alive) is stale and taken over; any other lock refuses the
 * second writer with a message that says who holds it and what to do.
 */
import { randomBytes } from "node:crypto";
import { closeSync, linkSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { errorText } from "../util/error-text.js";
import { SessionFileError } from "./load.js";

export interface LockOwner {
  pid: number;
  host: string;
  since: string;
}

export class SessionLockedError extends Error {
  constructor(
    readonly path: string,
    readonly owner: LockOwner | undefined,
  ) {
    const who = owner ? `process ${owner.pid} on ${owner.host} (since ${owner.since})` : "another process";
    super(
      `${path}: session is being written by ${who}; close it first, or delete ${path}.lock if that process is gone`,
    );
    this.name = "SessionLockedError";
  }
}

/** Whether a process with this pid runs on this host (also when it belongs to another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readOwner(lockPath: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(lockPath, "utf8")) as LockOwner;
    return typeof owner.pid === "number" && typeof owner.host === "string" ? owner : undefined;
  } catch {
    return undefined;
  }
}

const sameOwner = (a: LockOwner, b: LockOwner) => a.pid === b.pid && a.host === b.host && a.since === b.since;

export interface FileLock {
  readonly path: string;
  release(): void;
}

/**
 * Creates the lock file with its content in one step: a complete temp file hard-linked into
 * place (EEXIST when the lock is held). Created empty and written after, a lock could be read
 * empty by a second writer, which would then refuse without saying who holds it. Filesystems
 * without hard links get the two-step creation.
 */
function createLockFile(lockPath: string, content: string): void {
  const tmp = `${lockPath}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
  try {
    writeFileSync(tmp, content, { flag: "wx" });
  } catch (error) {
    // a full disk fails the lock's own write too: say so, and leave no half-written file behind
    removeIfThere(tmp);
    throw error;
  }
  try {
    linkSync(tmp, lockPath);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw error;
    createLockFileInTwoSteps(lockPath, content);
  } finally {
    unlinkSync(tmp);
  }
}

function createLockFileInTwoSteps(lockPath: string, content: string): void {
  const fd = openSync(lockPath, "wx");
  try {
    writeSync(fd, content);
  } catch (error) {
    // an empty lock left behind would refuse every later writer as if one held it
    closeSync(fd);
    removeIfThere(lockPath);
    throw error;
  }
  closeSync(fd);
}

function removeIfThere(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // never made, or gone already
  }
}

/** Removes the files of `dir` named `prefix` + a rest that `stale` accepts; a file gone meanwhile, or not ours, is left. */
export function removeStaleFiles(dir: string, prefix: string, stale: (rest: string) => boolean): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !stale(name.slice(prefix.length))) continue;
    try {
      unlinkSync(join(dir, name));
    } catch {
      // gone already, or not ours to remove
    }
  }
}

/**
 * Removes the temp files of lock-taking left by processes that are gone (killed between writing
 * the temp file and removing it): `<file>.lock.<pid>-<hex>.tmp` whose pid no longer runs here.
 */
export function removeStaleLockTemps(lockPath: string): void {
  removeStaleFiles(dirname(lockPath), `${basename(lockPath)}.`, (rest) => {
    const pid = /^(\d+)-[0-9a-f]{8}\.tmp$/.exec(rest)?.[1];
    return pid !== undefined && !isProcessAlive(Number(pid));
  });
}

/** Takes the lock of `sessionPath` or throws SessionLockedError. */
export function acquireLock(sessionPath: string): FileLock {
  const lockPath = `${sessionPath}.lock`;
  removeStaleLockTemps(lockPath);
  const me: LockOwner = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      createLockFile(lockPath, JSON.stringify(me));
      let released = false;
      return {
        path: lockPath,
        release() {
          if (released) return;
          released = true;
          const owner = readOwner(lockPath);
          if (owner && owner.pid === me.pid && owner.host === me.host) {
            try {
              unlinkSync(lockPath);
            } catch {
              // already gone
            }
          }
        },
      };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "EEXIST") {
        const full = code === "ENOSPC" || code === "EDQUOT";
        // a folder bonsai may not write to, a read-only disk: one line about the session, not the lock file
        throw new SessionFileError(
          "UNREADABLE",
          sessionPath,
          `cannot take the writer lock ${basename(lockPath)} (${code ?? errorText(error)}: ${code === "EACCES" || code === "EPERM" ? "no permission to create files in its folder" : code === "EROFS" ? "read-only file system" : full ? "the disk is full" : errorText(error)}); ${full ? "free some space, or open it read-only" : "open it read-only, or fix the folder's permissions"}`,
        );
      }
    }
    const owner = readOwner(lockPath);
    const stale = owner ? owner.host === me.host && !isProcessAlive(owner.pid) : false;
    if (owner && owner.pid === me.pid && owner.host === me.host) {
      throw new SessionLockedError(sessionPath, owner); // this process already writes it elsewhere
    }
    if (!owner || !stale) throw new SessionLockedError(sessionPath, owner);
    // Move the stale lock aside instead of deleting it: between reading it and now, another
    // process may have taken it over with a live lock, and deleting that would let two writers in.
    const aside = `${lockPath}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
    try {
      renameSync(lockPath, aside);
    } catch {
      continue; // already gone: someone else took it over; try again
    }
    const moved = readOwner(aside);
    if (moved && sameOwner(moved, owner)) {
      unlinkSync(aside);
      continue;
    }
    // A live lock was moved: put it back (link refuses to replace a lock made meanwhile) and give way.
    try {
      linkSync(aside, lockPath);
    } catch {
      // a newer lock is in place; it stands
    }
    unlinkSync(aside);
    throw new SessionLockedError(sessionPath, moved);
  }
  throw new SessionLockedError(sessionPath, readOwner(lockPath));
}
