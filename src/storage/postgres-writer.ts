/**
 * A PostgreSQL session open for writing. Its own connection holds the session's advisory lock,
 * and every write goes through that connection, so writes stop the moment the lock is lost.
 *
 * pg is asynchronous, SessionManager is not: append() queues lines and returns at once, and one
 * loop per session writes the queue in order, consecutive appends batched into one statement.
 * The first failed write is kept and thrown by every later append(), flush() and close(); nothing
 * queued after it is written (types.ts states the whole durability contract).
 */
import { hostname } from "node:os";
import type { LockOwner } from "./lock.js";
import { applyDigest, backupStamp, checkStorableLines, digestLines, EMPTY_META, type SessionMeta } from "./lines.js";
import { insertArchive, replaceArchive, selectArchive } from "./postgres-archive.js";
import { BATCH_LINES, type Client, connect, ensureSchema, lockKey, postgresLocation, readLines, type SessionRow, storeName } from "./postgres-schema.js";
import { type PrunedArchive, type RewriteOutcome, type SessionBackend, type SessionRead, storeLockedError } from "./types.js";

/** About this many bytes at most per INSERT (and at most BATCH_LINES lines). */
const BATCH_BYTES = 4 << 20;

// application_name holds at most 63 bytes
const hostnameShort = () => hostname().slice(0, 40);

type Meta = SessionMeta;

type Op =
  | { kind: "append"; firstSeq: number; lines: readonly string[]; meta: Meta }
  | { kind: "rewrite"; lines: readonly string[]; meta: Meta }
  | { kind: "backup"; backupId: string; lines: readonly string[] }
  | { kind: "discard-backup"; backupId: string; lines: readonly string[] }
  | { kind: "archive"; firstSeq: number; lines: readonly string[] }
  | { kind: "archive-replace"; lines: readonly string[] };

/** Sessions with writes still queued, reported if the process exits before they are written. */
const pending = new Set<PostgresBackend>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const backend of pending) {
      const n = backend.queuedLines();
      if (n > 0) process.stderr.write(`bonsai: ${backend.location}: ${n} lines were never written: the process exited before close() finished\n`);
    }
  });
}

export class PostgresBackend implements SessionBackend {
  readonly kind = "postgres" as const;
  readonly writes = "queued" as const;
  readonly location: string;
  private client: Client | undefined;
  private readonly key: [number, number];
  private locked = false;
  /** a writer opened in the background (openSibling): every write waits for it */
  private starting: Promise<void> | undefined;
  private nextSeq = 0;
  private meta: Meta = EMPTY_META;
  private readonly queue: Op[] = [];
  private running: Promise<void> | undefined;
  /** the first write that failed: every later call throws it */
  private failure: Error | undefined;
  private closing: Promise<void> | undefined;
  private connectionLost: Error | undefined;
  /** the archive as read at open plus what was queued since: reads need no round trip */
  private archived: string[] = [];
  readonly archive: PrunedArchive;

  constructor(
    private readonly connectionString: string,
    private readonly id: string,
  ) {
    this.location = postgresLocation(connectionString, id);
    this.key = lockKey(id);
    this.archive = {
      location: `${this.location} (table bonsai.pruned)`,
      append: (lines) => this.appendArchive(lines),
      replace: (lines) => this.replaceArchive(lines),
      lines: () => [...this.archived],
    };
    installExitHook();
  }

  /** Connects, creates or upgrades the schema, and takes the session's lock. */
  async start(): Promise<void> {
    const client = await connect(this.connectionString, `bonsai ${process.pid}@${hostnameShort()}`);
    this.client = client;
    // an idle connection that drops emits "error"; unheard, it would crash the process
    client.on("error", (error) => {
      this.connectionLost = new Error(
        `${this.location}: lost the connection to PostgreSQL (${error.message}); the writer lock went with it, open the session again`,
      );
    });
    await ensureSchema(client, storeName(this.connectionString), true);
    await this.acquire(client);
  }

  /**
   * A writer for a new session that starts in the background, so SessionManager can switch to
   * it without waiting (createBranchedSession). Its writes queue behind the start; a start that
   * fails (or finds the session already there) fails them all, reported like any write failure.
   */
  static startingNew(connectionString: string, id: string): PostgresBackend {
    const backend = new PostgresBackend(connectionString, id);
    backend.starting = (async () => {
      await backend.start();
      const { rows } = await backend.client!.query("SELECT 1 FROM bonsai.sessions WHERE id = $1", [id]);
      if (rows.length > 0) throw new Error(`${backend.location}: a session with this id already exists`);
    })();
    // kept as the failure for the first write to report; never an unhandled rejection
    backend.starting.catch((error: Error) => {
      backend.failure ??= error;
    });
    return backend;
  }

  private async acquire(client: Client): Promise<void> {
    const { rows } = await client.query("SELECT pg_try_advisory_lock($1, $2) AS ok", this.key);
    if (!rows[0].ok) {
      throw storeLockedError(
        this.location,
        await this.lockHolder(client),
        "close it first; the lock is released by itself when that process or its connection ends",
      );
    }
    this.locked = true;
  }

  /** Who holds the session's lock, as far as the server tells (its application_name). */
  private async lockHolder(client: Client): Promise<LockOwner | undefined> {
    try {
      const { rows } = await client.query(
        `SELECT a.application_name AS app, a.backend_start AS since FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
           AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND l.classid = ($1::bigint & 4294967295)::oid AND l.objid = ($2::bigint & 4294967295)::oid`,
        this.key,
      );
      const match = /^bonsai (\d+)@(.+)$/.exec(rows[0]?.app ?? "");
      if (!match) return undefined;
      return { pid: Number(match[1]), host: match[2], since: (rows[0].since as Date).toISOString() };
    } catch {
      return undefined;
    }
  }

  async load<T extends { endsWithNewline: boolean }>(read: SessionRead<T>): Promise<T | undefined> {
    const client = this.client!;
    const lines = await readLines(client, this.id);
    const { rows } = await client.query<SessionRow & { last: string | null }>(
      "SELECT s.*, (SELECT max(seq) FROM bonsai.entries WHERE session_id = $1) AS last FROM bonsai.sessions s WHERE s.id = $1",
      [this.id],
    );
    const row = rows[0];
    if (row) {
      this.meta = { title: row.title, cwd: row.cwd, created: row.created, bytes: Number(row.bytes), entryCount: Number(row.entry_count) };
      this.nextSeq = row.last === null ? 0 : Number(row.last) + 1;
    }
    this.archived = await selectArchive(client, this.id);
    return lines === undefined ? undefined : read.lines(lines, this.location);
  }

  private appendArchive(lines: readonly string[]): void {
    this.writable();
    checkStorableLines(lines, this.location);
    this.queue.push({ kind: "archive", firstSeq: this.archived.length, lines });
    this.archived.push(...lines);
    this.kick();
  }

  private replaceArchive(lines: readonly string[]): void {
    this.writable();
    checkStorableLines(lines, this.location);
    this.queue.push({ kind: "archive-replace", lines });
    this.archived = [...lines];
    this.kick();
  }

  /** Copies the session as it will be after everything queued so far, under `<id>.bak-<time>`. */
  backup(): string {
    this.writable();
    const backupId = `${this.id}.bak-${backupStamp()}`;
    this.queue.push({ kind: "backup", backupId, lines: [] });
    this.kick();
    this.backups.set(postgresLocation(this.connectionString, backupId), backupId);
    return postgresLocation(this.connectionString, backupId);
  }

  discardBackup(location: string): void {
    const backupId = this.backups.get(location);
    if (backupId === undefined) throw new Error(`${location}: not a backup this writer made`);
    this.writable();
    this.queue.push({ kind: "discard-backup", backupId, lines: [] });
    this.kick();
    this.backups.delete(location);
  }

  /** the backups made by this writer (location to id), which alone it may discard */
  private readonly backups = new Map<string, string>();

  openSibling(header: { id: string }): { backend: SessionBackend; location: string } {
    const backend = PostgresBackend.startingNew(this.connectionString, header.id);
    return { backend, location: backend.location };
  }

  queuedLines(): number {
    return this.queue.reduce((n, op) => n + op.lines.length, 0);
  }

  private writable(): void {
    if (this.failure) throw this.failure;
    if (this.closing) throw new Error(`${this.location}: session is closed; open it again to write`);
  }

  append(lines: readonly string[]): void {
    this.writable();
    if (lines.length === 0) return;
    checkStorableLines(lines, this.location);
    const meta = applyDigest(this.meta, digestLines(lines, this.nextSeq === 0), false);
    this.queue.push({ kind: "append", firstSeq: this.nextSeq, lines, meta });
    this.nextSeq += lines.length;
    this.meta = meta;
    this.kick();
  }

  rewrite(lines: readonly string[]): RewriteOutcome {
    this.writable();
    checkStorableLines(lines, this.location);
    const meta = applyDigest(this.meta, digestLines(lines, true), true);
    this.queue.push({ kind: "rewrite", lines, meta });
    this.nextSeq = lines.length;
    this.meta = meta;
    this.kick();
    return { leafDisplaced: false };
  }

  private kick(): void {
    if (this.running) return;
    pending.add(this);
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.queue.length === 0) pending.delete(this);
    });
  }

  /** Writes the queue in order until it is empty or a write fails; never rejects. */
  private async drain(): Promise<void> {
    if (this.starting) await this.starting.catch(() => {});
    while (this.queue.length > 0 && !this.failure) {
      const op = this.queue[0];
      try {
        if (this.connectionLost) throw this.connectionLost;
        if (op.kind === "rewrite") {
          await this.writeRewrite(op);
          this.queue.shift();
        } else if (op.kind === "backup") {
          await this.writeBackup(op.backupId);
          this.queue.shift();
        } else if (op.kind === "discard-backup") {
          // one statement, so one implicit transaction
          await this.client!.query("WITH gone AS (DELETE FROM bonsai.entries WHERE session_id = $1) DELETE FROM bonsai.sessions WHERE id = $1", [op.backupId]);
          this.queue.shift();
        } else if (op.kind === "archive") {
          await insertArchive(this.client!, this.id, op.firstSeq, op.lines);
          this.queue.shift();
        } else if (op.kind === "archive-replace") {
          await replaceArchive(this.client!, this.id, op.lines);
          this.queue.shift();
        } else {
          const batch = this.takeAppendBatch();
          await this.writeAppend(batch);
          this.queue.splice(0, batch.ops);
        }
      } catch (error) {
        const queued = this.queuedLines();
        this.failure =
          error instanceof Error && error === this.connectionLost
            ? error
            : new Error(
                `${this.location}: writing to PostgreSQL failed (${(error as Error).message}); ${queued} queued lines were not written, open the session again`,
              );
        this.queue.length = 0;
      }
    }
  }

  /** Consecutive appends merged into one statement, within the batch limits. */
  private takeAppendBatch(): { ops: number; firstSeq: number; lines: string[]; meta: Meta } {
    const first = this.queue[0] as Extract<Op, { kind: "append" }>;
    const lines: string[] = [];
    let bytes = 0;
    let ops = 0;
    let meta = first.meta;
    for (const op of this.queue) {
      if (op.kind !== "append") break;
      if (ops > 0 && (lines.length + op.lines.length > BATCH_LINES || bytes > BATCH_BYTES)) break;
      for (const line of op.lines) {
        lines.push(line);
        bytes += line.length;
      }
      meta = op.meta;
      ops++;
    }
    return { ops, firstSeq: first.firstSeq, lines, meta };
  }

  private async writeBackup(backupId: string): Promise<void> {
    await this.client!.query(
      `WITH copied AS (
         INSERT INTO bonsai.entries (session_id, seq, line) SELECT $2, seq, line FROM bonsai.entries WHERE session_id = $1
       )
       INSERT INTO bonsai.sessions (id, title, cwd, created, updated, bytes, entry_count)
       SELECT $2, title, cwd, created, updated, bytes, entry_count FROM bonsai.sessions WHERE id = $1`,
      [this.id, backupId],
    );
  }

  private async writeAppend(batch: { firstSeq: number; lines: string[]; meta: Meta }): Promise<void> {
    const seqs = batch.lines.map((_, i) => batch.firstSeq + i);
    // one statement, so one implicit transaction: the lines and the ls row change together
    await this.client!.query(
      `WITH added AS (
         INSERT INTO bonsai.entries (session_id, seq, line) SELECT $1, s, l FROM unnest($7::bigint[], $8::text[]) AS t(s, l)
       )
       ${UPSERT_SESSION}`,
      [this.id, ...metaParams(batch.meta), seqs, batch.lines],
    );
  }

  private async writeRewrite(op: { lines: readonly string[]; meta: Meta }): Promise<void> {
    await this.client!.query("BEGIN");
    try {
      await this.client!.query("DELETE FROM bonsai.entries WHERE session_id = $1", [this.id]);
      for (let start = 0; start < op.lines.length; start += BATCH_LINES) {
        const lines = op.lines.slice(start, start + BATCH_LINES);
        await this.client!.query(
          "INSERT INTO bonsai.entries (session_id, seq, line) SELECT $1, s, l FROM unnest($2::bigint[], $3::text[]) AS t(s, l)",
          [this.id, lines.map((_, i) => start + i), lines],
        );
      }
      if (op.lines.length === 0) await this.client!.query("DELETE FROM bonsai.sessions WHERE id = $1", [this.id]);
      else await this.client!.query(UPSERT_SESSION, [this.id, ...metaParams(op.meta)]);
      await this.client!.query("COMMIT");
    } catch (error) {
      await this.client!.query("ROLLBACK").catch(() => {});
      throw error;
    }
  }

  /** Resolves when everything queued so far is committed; rejects with the first failed write. */
  async flush(): Promise<void> {
    if (this.starting) await this.starting.catch(() => {});
    while (this.running) await this.running;
    if (this.failure) throw this.failure;
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    let failure: unknown;
    try {
      await this.flush();
    } catch (error) {
      failure = error;
    }
    try {
      if (this.locked && !this.connectionLost) await this.client!.query("SELECT pg_advisory_unlock($1, $2)", this.key);
    } catch {
      // ending the connection releases the lock as well
    }
    this.locked = false;
    pending.delete(this);
    await this.client?.end().catch(() => {});
    if (failure) throw failure;
  }
}

/** Upserts the ls row from $1 (id) and $2..$6 (the meta). */
const UPSERT_SESSION = `INSERT INTO bonsai.sessions (id, title, cwd, created, updated, bytes, entry_count)
  VALUES ($1, $2, $3, $4, now(), $5, $6)
  ON CONFLICT (id) DO UPDATE SET title = excluded.title, cwd = excluded.cwd, created = excluded.created,
    updated = excluded.updated, bytes = excluded.bytes, entry_count = excluded.entry_count`;

const metaParams = (meta: SessionMeta) => [meta.title, meta.cwd, meta.created, meta.bytes, meta.entryCount];
