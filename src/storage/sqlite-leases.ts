/**
 * One writer per SQLite session: a row of `leases` holding the writer's pid, host, heartbeat and
 * a random token. Every write checks the token inside its own transaction (the fence), so a
 * writer whose lease was taken over stops instead of interleaving its lines with the new
 * writer's. A lease whose process is gone, or another host's whose heartbeat stopped, is taken
 * over (owner.ts says when).
 */
import { HEARTBEAT_MS, isStaleLease, type Lease, newLease, ownerOf } from "./owner.js";
import { type Database, immediateTransaction } from "./sqlite-schema.js";
import { storeLockedError } from "./types.js";

export class SqliteLease {
  private readonly lease: Lease = newLease();
  private readonly heartbeat: NodeJS.Timeout;
  /** why writing stopped (the lease was taken over, or it was released) */
  private stopped: Error | undefined;
  private readonly statements;

  /** Takes the session's lease or throws SessionLockedError, then keeps it alive. */
  constructor(
    private readonly db: Database,
    private readonly id: string,
    private readonly location: string,
  ) {
    this.statements = {
      lease: db.prepare("SELECT * FROM leases WHERE session_id = ?"),
      dropLease: db.prepare("DELETE FROM leases WHERE session_id = ? AND token = ?"),
      takeLease: db.prepare(
        "INSERT INTO leases (session_id, token, pid, host, since, heartbeat) VALUES (@id, @token, @pid, @host, @since, @heartbeat)",
      ),
      fence: db.prepare("UPDATE leases SET heartbeat = ? WHERE session_id = ? AND token = ?"),
    };
    this.acquire();
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private acquire(): void {
    const lease = this.lease;
    immediateTransaction(this.db, () => {
      const held = this.statements.lease.get(this.id) as (Lease & { session_id: string }) | undefined;
      if (held) {
        if (!isStaleLease(held, lease)) {
          throw storeLockedError(
            this.location,
            ownerOf(held),
            "close it first; a lease of a process that is gone is taken over automatically",
          );
        }
        this.db.prepare("DELETE FROM leases WHERE session_id = ?").run(this.id);
      }
      this.statements.takeLease.run({ id: this.id, ...lease });
    });
  }

  /** Whether writes may still go ahead as far as this process knows (the fence has the last word). */
  get held(): boolean {
    return this.stopped === undefined;
  }

  /** Throws why writing stopped, if it did. */
  writable(): void {
    if (this.stopped) throw this.stopped;
  }

  /** Refreshes the heartbeat, inside the write's transaction; a lease someone took over stops this and every later write. */
  fence(): void {
    if (this.statements.fence.run(Date.now(), this.id, this.lease.token).changes === 0) {
      this.stopped = storeLockedError(
        this.location,
        undefined,
        "this writer's lease was taken over (its heartbeat stopped for too long); open the session again",
      );
      throw this.stopped;
    }
  }

  private beat(): void {
    if (this.stopped) return;
    try {
      this.fence();
    } catch {
      // a busy database skips one beat; a lost lease is kept in `stopped` for the next write
    }
  }

  /** Stops the heartbeat and gives the lease back; every later write is refused. */
  release(): void {
    clearInterval(this.heartbeat);
    this.stopped ??= new Error(`${this.location}: session is closed; open it again to write`);
    this.statements.dropLease.run(this.id, this.lease.token);
  }
}
