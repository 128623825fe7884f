/**
 * A SessionManager's hold on its store (a file, SQLite or PostgreSQL; see src/storage): where the
 * session is, the writer while there is one, and the one mode that says whether a write may go
 * ahead and, when not, why. Appends, rewrites, the pruned-output archive, switching to a branched
 * session, flushing and closing all go through here.
 */
import { parseLocation } from "../storage/location.js";
import { storeOf } from "../storage/stores.js";
import { rewriteAfterBackup } from "../storage/backup.js";
import type { RewriteOutcome, SessionBackend, StoreArchive, StoreKind, StoreLocation } from "../storage/types.js";
import type { SessionEntry, SessionHeader } from "../format/entry-types.js";
import { toJsonLines } from "../format/lines.js";
import type { SessionParts } from "./opening.js";

/** What a write meets; exactly one holds at a time. */
export type WriteMode =
  /** no store at all: writes stay in memory */
  | { readonly mode: "memory" }
  | { readonly mode: "writable"; readonly backend: SessionBackend }
  /**
   * the store still holds format `version`: writing would mix formats, so a write first writes the
   * migration (`onFirstWrite`, the default) or is refused (opened with migrate: false)
   */
  | { readonly mode: "unmigrated"; readonly backend: SessionBackend; readonly version: number; readonly onFirstWrite: boolean }
  | { readonly mode: "read-only" }
  /** close() gave the writer up */
  | { readonly mode: "closed" };

export class StoreHandle {
  private state: WriteMode;
  /** writers given up without waiting (a branched session switched stores); close() waits for them */
  private retired: Promise<void>[] = [];
  /** a file path or a store location (database password left out); undefined in memory */
  private where: string | undefined;
  /** the same as its store reads it; undefined in memory */
  private at: StoreLocation | undefined;
  /** false until the first append writes the header */
  headerWritten: boolean;
  /** what a migration written before the first write writes (the session as migrated in memory), and who hears of it */
  private migration: { current: () => { header: SessionHeader; entries: readonly SessionEntry[] }; written: (version: number, backupPath: string) => void } | undefined;

  constructor(parts: SessionParts) {
    this.where = parts.location;
    this.at = parts.at;
    this.headerWritten = parts.headerWritten;
    const backend = parts.backend;
    if (parts.location === undefined) this.state = { mode: "memory" };
    else if (!backend) this.state = { mode: "read-only" };
    else if (parts.unmigratedVersion !== undefined) {
      this.state = { mode: "unmigrated", backend, version: parts.unmigratedVersion, onFirstWrite: parts.migrateOnFirstWrite === true };
    }
    else this.state = { mode: "writable", backend };
  }

  get location(): string | undefined {
    return this.where;
  }

  get mode(): WriteMode["mode"] {
    return this.state.mode;
  }

  get kind(): StoreKind | undefined {
    return this.at?.kind;
  }

  /**
   * The session's archive of pruned tool output, as its store keeps it (a sidecar file beside a
   * session file, a table in a database: Store.archive), while the session has its writer.
   */
  get archive(): StoreArchive | undefined {
    const backend = this.backend();
    return backend && this.at ? storeOf(this.at).archive(this.at, backend) : undefined;
  }

  /** Where the migration written before the first write comes from (SessionView sets it). */
  migrateBeforeFirstWrite(migration: NonNullable<StoreHandle["migration"]>): void {
    this.migration = migration;
  }

  /** The writer, or an error that says why there is none. Never called in memory. */
  requireWriter(): SessionBackend {
    const state = this.state;
    switch (state.mode) {
      case "writable":
        return state.backend;
      case "closed":
        throw new Error(`${this.where}: session is closed; open it again to write`);
      case "unmigrated":
        if (state.onFirstWrite && this.migration) {
          const { header, entries } = this.migration.current();
          const backupPath = this.persistMigration(header, entries) as string;
          this.migration.written(state.version, backupPath);
          return state.backend;
        }
        throw new Error(
          `${this.where}: format v${state.version} file opened without migration; open it with migration (or run \`bonsai migrate\`) before writing`,
        );
      default:
        throw new Error(`${this.where}: session was opened read-only`);
    }
  }

  /** Refuses a change in memory that could never be written (read-only or closed). */
  refuseIfReadOnly(): void {
    if (this.where && !this.backend()) throw new Error(`${this.where}: session was opened read-only`);
  }

  /** Writes the entries in one append (and the header, the first time); nothing in memory. */
  append(header: SessionHeader, ...entries: SessionEntry[]): void {
    if (!this.where) return;
    this.requireWriter().append(toJsonLines(this.headerWritten ? entries : [header, ...entries]));
    this.headerWritten = true;
  }

  /** Replaces every line (the header's first), after a backup of the old ones when `backupFirst` says so; gives the backup's location. */
  rewrite(lines: readonly string[], backupFirst: boolean): RewriteOutcome & { backup?: string } {
    const writer = this.requireWriter();
    const done = backupFirst ? rewriteAfterBackup(writer, lines) : writer.rewrite(lines);
    this.headerWritten = true;
    return done;
  }

  /** Writes a migration kept in memory (a backup first) and lifts the block on writes; undefined when there was none. */
  persistMigration(header: SessionHeader, entries: readonly SessionEntry[]): string | undefined {
    const state = this.state;
    if (state.mode !== "unmigrated") return undefined;
    const backupPath = rewriteAfterBackup(state.backend, toJsonLines([header, ...entries])).backup;
    this.state = { mode: "writable", backend: state.backend };
    this.headerWritten = true;
    return backupPath;
  }

  /**
   * Writes a new session beside this one in the same store (a file in the same directory, a new
   * id in the same database) and moves over to it; the old writer is closed without waiting.
   */
  switchToSibling(header: SessionHeader, entries: readonly SessionEntry[]): string {
    const next = this.requireWriter().openSibling(header);
    next.backend.rewrite(toJsonLines([header, ...entries]));
    const old = this.backend()!.close();
    if (old) {
      // reported by the next flush() or close(), not as an unhandled rejection in between
      old.catch(() => {});
      this.retired.push(old);
    }
    this.state = { mode: "writable", backend: next.backend };
    this.where = next.location;
    // the sibling's name is a location its store reads back (a password left out: the archive
    // only prints it, and writes through the backend)
    this.at = parseLocation(next.location);
    this.headerWritten = true;
    return next.location;
  }

  flush(): Promise<void> {
    return settled([this.backend()?.flush(), ...this.retired]);
  }

  /**
   * Gives the writer up, after `lastWrite` when the session is writable (the manager persists a
   * moved leaf there). A session in memory has no store to close.
   */
  close(lastWrite: () => void): Promise<void> {
    const pending: (void | Promise<void>)[] = this.retired;
    this.retired = [];
    const state = this.state;
    if (state.mode === "writable" || state.mode === "unmigrated") {
      try {
        try {
          if (state.mode === "writable") lastWrite();
        } finally {
          pending.push(state.backend.close());
          this.state = { mode: "closed" };
        }
      } catch (error) {
        // the error thrown here is the one to report; a queued store's rejection would repeat it
        settled(pending).catch(() => {});
        throw error;
      }
    } else if (state.mode === "read-only") this.state = { mode: "closed" };
    return settled(pending);
  }

  private backend(): SessionBackend | undefined {
    const state = this.state;
    return state.mode === "writable" || state.mode === "unmigrated" ? state.backend : undefined;
  }
}

/** One promise for work that is done (undefined) or still running (PostgreSQL); rejects with the first failure. */
function settled(work: readonly (void | Promise<void>)[]): Promise<void> {
  const running = work.filter((w): w is Promise<void> => w instanceof Promise);
  if (running.length === 0) return Promise.resolve();
  return Promise.all(running).then(() => undefined);
}
