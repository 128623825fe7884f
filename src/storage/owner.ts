/**
 * Who holds a session's writer lease, and when a lease is stale. Same rules as the lock file: on
 * this host a lease whose process is gone is stale; a lease from another host is stale only when
 * its heartbeat stopped long ago (we cannot look at that host's processes).
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { isProcessAlive, type LockOwner } from "./lock.js";

/** A writer refreshes its heartbeat at least this often while it holds a lease. */
export const HEARTBEAT_MS = 30_000;
/** A lease from another host with no heartbeat for this long is taken over. */
export const STALE_AFTER_MS = 10 * HEARTBEAT_MS;

export interface Lease extends LockOwner {
  /** random per lease: proves a later write still holds it */
  token: string;
  /** ms since the epoch */
  heartbeat: number;
}

export function newLease(now: number = Date.now()): Lease {
  return {
    pid: process.pid,
    host: hostname(),
    since: new Date(now).toISOString(),
    token: randomBytes(12).toString("hex"),
    heartbeat: now,
  };
}

/** Whether `held` may be taken over by `me`. A lease of this very process is never stale. */
export function isStaleLease(held: Lease, me: Lease, now: number = Date.now()): boolean {
  if (held.host === me.host) return held.pid !== me.pid && !isProcessAlive(held.pid);
  return now - held.heartbeat > STALE_AFTER_MS;
}

export const ownerOf = (lease: Lease): LockOwner => ({ pid: lease.pid, host: lease.host, since: lease.since });
