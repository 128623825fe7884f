/**
 * SessionManager: a session's entries as a tree, with a store behind it (a JSONL file, a SQLite
 * or PostgreSQL database; see src/storage) or nothing, in memory. Appends write one line each as
 * soon as the entry exists; rewrites are atomic; a lock or lease keeps a second writer out; the
 * leaf survives a reload (see persistLeaf).
 */
import { homedir } from "node:os";
import { join } from "node:path";
import type { AgentMessage, ImageContent, TextContent } from "../format/message-types.js";
import type { PrunedArchive, SessionBackend, StoreKind } from "../storage/types.js";
import { generateEntryId } from "../format/ids.js";
import { InvalidBodyError } from "../storage/bodies.js";
import { type LoadIssue, loadSessionIndex } from "../storage/load.js";
import {
  createFileParts,
  createInStoreParts,
  newHeader,
  type OpenOptions,
  openFileParts,
  openLocationParts,
  type SessionParts,
  toLines,
} from "./opening.js";
import { describePathProblem, type PathProblem } from "../format/path.js";
import type { AppendOptions } from "../storage/file-writer.js";
import { TreeIndex } from "./tree.js";
import {
  CHECKOUT_CUSTOM_TYPE,
  isCheckoutMarker,
  type BranchSummaryEntry,
  type CompactionEntry,
  type CustomEntry,
  type CustomMessageEntry,
  type FileEntry,
  type LabelEntry,
  type MessageEntry,
  type ModelChangeEntry,
  type SessionContext,
  type SessionEntry,
  type SessionHeader,
  type SessionInfoEntry,
  type SessionTreeNode,
  type ThinkingLevelChangeEntry,
} from "../format/entry-types.js";

export interface CompactionExtras {
  shortSummary?: string;
  preserveData?: Record<string, unknown>;
}

/** Where bonsai keeps sessions: `$BONSAI_DIR` or `~/.bonsai`, then `sessions/--<cwd>--/`. */
export function defaultSessionDir(cwd: string): string {
  const root = process.env.BONSAI_DIR ?? join(homedir(), ".bonsai");
  const encoded = `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
  return join(root, "sessions", encoded);
}

type NewEntry<E extends SessionEntry> = Omit<E, "id" | "parentId" | "timestamp">;

export class SessionManager {
  private index = new TreeIndex();
  private header: SessionHeader;
  private leafId: string | null = null;
  /** the leaf was moved without an append; the file still implies the old one */
  private leafMoved = false;
  private backend: SessionBackend | undefined;
  /** writers given up without waiting (a branched session switched stores); close() waits for them */
  private retired: Promise<void>[] = [];
  private closed = false;
  /** the file on disk is still this older format (opened with migrate: false): writing would mix formats */
  private unmigratedVersion: number | undefined;
  private headerWritten: boolean;
  private readonly issues: LoadIssue[];
  private readonly warn: (message: string) => void;
  private readonly readOnly: boolean;
  private readonly kind: StoreKind | undefined;
  /** a file path or a store location (database password left out); undefined in memory */
  private location: string | undefined;
  /** the file was read again in full after a message body turned out invalid (see read()) */
  private rereadInFull = false;

  private constructor(parts: SessionParts, options: OpenOptions = {}) {
    this.location = parts.location;
    this.header = parts.header;
    this.headerWritten = parts.headerWritten;
    this.issues = parts.issues ?? [];
    this.warn = options.onWarning ?? (() => {});
    this.readOnly = options.readOnly ?? false;
    this.backend = parts.backend;
    this.kind = parts.kind ?? (parts.location === undefined ? undefined : "file");
    this.unmigratedVersion = parts.unmigratedVersion;
    this.index = parts.entries instanceof TreeIndex ? parts.entries : new TreeIndex(parts.entries);
    this.leafId = this.read(() => leafFromFile(this.index));
  }

  // ---------------------------------------------------------------- construction

  /** Opens an existing session file (or starts one at that path when it does not exist yet). */
  static open(path: string, options: OpenOptions = {}): SessionManager {
    return new SessionManager(openFileParts(path, options), options);
  }

  /**
   * Opens a session at any location: a file path, `sqlite:PATH#ID` or `postgres://…#ID` (see
   * src/storage/location.ts). Files open as with open(); a database session is read whole, under
   * its writer lease unless read-only. A new database session is created by its first append,
   * with the location's id as its own. Await close() (and flush()) for PostgreSQL: its writes
   * are queued (see the durability contract in src/storage/types.ts).
   */
  static async openUrl(location: string, options: OpenOptions = {}): Promise<SessionManager> {
    return new SessionManager(await openLocationParts(location, options), options);
  }

  /**
   * A new session for `cwd` in a store: a directory (as create()), `sqlite:PATH` or
   * `postgres://…`; a `#ID` names it, otherwise it gets a fresh session id. Refuses an id that exists.
   */
  static async createIn(store: string, cwd: string, options: AppendOptions = {}): Promise<SessionManager> {
    return new SessionManager(await createInStoreParts(store, cwd, options));
  }

  /** A new persisted session for `cwd`, in `dir` (default: bonsai's session directory for cwd). */
  static create(cwd: string, dir?: string, options: AppendOptions = {}): SessionManager {
    return new SessionManager(createFileParts(cwd, dir ?? defaultSessionDir(cwd), options));
  }

  /** A session that never touches the disk. */
  static inMemory(cwd: string = process.cwd()): SessionManager {
    return new SessionManager({ location: undefined, header: newHeader(cwd), entries: [], headerWritten: false });
  }

  // ---------------------------------------------------------------- reading

  /** The session's file; undefined in memory and for database sessions (see getLocation). */
  getSessionFile(): string | undefined {
    return this.kind === "file" ? this.location : undefined;
  }

  /** Where the session is stored: a file path, or a `sqlite:…#ID` / `postgres://…#ID` location. */
  getLocation(): string | undefined {
    return this.location;
  }

  /**
   * Where a database session archives pruned tool output (a session file uses a sidecar file,
   * see ops/prune.ts). Undefined for files, in memory, and when not open for writing.
   */
  getPrunedArchive(): PrunedArchive | undefined {
    return this.backend?.archive;
  }

  /** The kind of store behind the session; undefined in memory. */
  getStoreKind(): StoreKind | undefined {
    return this.kind;
  }

  getSessionId(): string {
    return this.header.id;
  }

  getCwd(): string {
    return this.header.cwd;
  }

  getHeader(): SessionHeader {
    return this.header;
  }

  isPersisted(): boolean {
    return this.location !== undefined;
  }

  /** Lines that were skipped or looked suspicious when the file was read. */
  getLoadIssues(): readonly LoadIssue[] {
    return this.issues;
  }

  /** All entries in file order. The array is the manager's own: do not mutate it. */
  getEntries(): readonly SessionEntry[] {
    return this.read(() => this.index.entries);
  }

  getEntry(id: string): SessionEntry | undefined {
    return this.read(() => this.index.get(id));
  }

  getLeafId(): string | null {
    return this.leafId;
  }

  getLeafEntry(): SessionEntry | undefined {
    return this.read(() => (this.leafId ? this.index.get(this.leafId) : undefined));
  }

  getChildren(id: string): SessionEntry[] {
    return this.read(() => [...this.index.children(id)]);
  }

  getLabel(id: string): string | undefined {
    return this.index.label(id);
  }

  /** Root-first path to `fromId` (default: the leaf), including metadata entries. */
  getBranch(fromId?: string | null): SessionEntry[] {
    return this.read(() => this.index.branch(fromId === undefined ? this.leafId : fromId, this.reportPathProblem));
  }

  getTree(): SessionTreeNode[] {
    return this.read(() => this.index.tree(this.reportPathProblem));
  }

  /** The session's name: the newest session_info entry, else the header title. */
  getSessionName(): string | undefined {
    const info = this.read(() => this.index.findLast("session_info"));
    if (info?.type === "session_info") return info.name?.trim() || undefined;
    return this.header.title || undefined;
  }

  buildSessionContext(leafId: string | null = this.leafId): SessionContext {
    return this.read(() => this.index.context(leafId, this.reportPathProblem));
  }

  private readonly reportPathProblem = (problem: PathProblem) => this.warn(describePathProblem(problem));

  /**
   * Runs something that may read message bodies left on disk. A body that is well-formed JSON
   * but not a valid entry (bodies: "checked") makes the file be read again in full, once: that
   * line is then skipped and reported, as an open with bodies: "parsed" would have done, and the
   * read is tried again on the new index. Anything else is thrown as it is.
   */
  private read<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      if (!(error instanceof InvalidBodyError) || !this.rereadParsed()) throw error;
      return run();
    }
  }

  /** Replaces the index by a full read of the file; false when there is no file to read again. */
  private rereadParsed(): boolean {
    if (this.rereadInFull || this.kind !== "file" || this.location === undefined) return false;
    this.rereadInFull = true;
    const loaded = loadSessionIndex(this.location, "parsed", new TreeIndex());
    if (loaded.unmigrated) {
      loaded.index.close(); // an older format never leaves bodies on disk: not reached
      return false;
    }
    // the lines reported at open are reported again (a torn tail that appends have since
    // closed comes back as malformed JSON): only lines not reported yet are new
    const reported = new Set(this.issues.map((issue) => issue.line));
    for (const issue of loaded.issues) {
      if (reported.has(issue.line)) continue;
      this.issues.push(issue);
      this.warn(`${this.location}:${issue.line}: ${issue.message}`);
    }
    const old = this.index;
    this.index = loaded.index;
    old.close();
    if (this.leafId !== null && !this.index.has(this.leafId)) {
      // the leaf itself was the damaged line: the file's own leaf
      this.leafId = leafFromFile(this.index);
    }
    return true;
  }

  // ---------------------------------------------------------------- appending

  appendMessage(message: AgentMessage): string {
    return this.append<MessageEntry>({ type: "message", message });
  }

  appendThinkingLevelChange(thinkingLevel: string): string {
    return this.append<ThinkingLevelChangeEntry>({ type: "thinking_level_change", thinkingLevel });
  }

  /** Written in both spellings: pi reads provider/modelId, oh-my-pi reads model. */
  appendModelChange(provider: string, modelId: string, role?: string): string {
    const entry: NewEntry<ModelChangeEntry> = { type: "model_change", provider, modelId, model: `${provider}/${modelId}` };
    if (role !== undefined) entry.role = role;
    return this.append<ModelChangeEntry>(entry);
  }

  appendCompaction<T = unknown>(
    summary: string,
    firstKeptEntryId: string,
    tokensBefore: number,
    details?: T,
    fromExtension?: boolean,
    extra: CompactionExtras = {},
  ): string {
    const entry: NewEntry<CompactionEntry<T>> = { type: "compaction", summary, firstKeptEntryId, tokensBefore };
    if (extra.shortSummary !== undefined) entry.shortSummary = extra.shortSummary;
    if (details !== undefined) entry.details = details;
    if (extra.preserveData !== undefined) entry.preserveData = extra.preserveData;
    if (fromExtension !== undefined) {
      entry.fromHook = fromExtension;
      entry.fromExtension = fromExtension;
    }
    return this.append<CompactionEntry>(entry as NewEntry<CompactionEntry>);
  }

  appendCustomEntry<T = unknown>(customType: string, data?: T): string {
    const entry: NewEntry<CustomEntry> = { type: "custom", customType };
    if (data !== undefined) entry.data = data;
    return this.append<CustomEntry>(entry);
  }

  appendCustomMessageEntry<T = unknown>(
    customType: string,
    content: string | (TextContent | ImageContent)[],
    display: boolean,
    details?: T,
  ): string {
    const entry: NewEntry<CustomMessageEntry> = { type: "custom_message", customType, content, display };
    if (details !== undefined) entry.details = details;
    return this.append<CustomMessageEntry>(entry);
  }

  appendLabelChange(targetId: string, label?: string): string {
    if (!this.index.has(targetId)) throw new Error(`Entry ${targetId} not found`);
    const entry: NewEntry<LabelEntry> = { type: "label", targetId };
    if (label !== undefined) entry.label = label;
    return this.append<LabelEntry>(entry);
  }

  /** Names the session: a session_info entry (pi) and the header title (oh-my-pi, a rewrite). */
  appendSessionInfo(name: string): string {
    const trimmed = name.trim();
    const id = this.append<SessionInfoEntry>({ type: "session_info", name: trimmed });
    if (trimmed) this.header = { ...this.header, title: trimmed };
    else {
      const { title: _dropped, ...rest } = this.header;
      this.header = rest as SessionHeader;
    }
    if (this.headerWritten) this.rewriteFile();
    return id;
  }

  private append<E extends SessionEntry>(fields: NewEntry<E>, parentId: string | null = this.leafId): string {
    // type first, then the tree fields, then the rest: the order the reference writes
    const { type, ...rest } = fields as { type: string };
    const entry = {
      type,
      id: generateEntryId(this.index),
      parentId,
      timestamp: new Date().toISOString(),
      ...rest,
    } as unknown as SessionEntry;
    this.persist(entry);
    this.index.add(entry);
    this.leafId = entry.id;
    this.leafMoved = false;
    return entry.id;
  }

  /** Writes the entry (and the header, the first time) before it joins the index. */
  private persist(entry: SessionEntry): void {
    if (!this.location) return;
    const lines = this.headerWritten ? [JSON.stringify(entry)] : [JSON.stringify(this.header), JSON.stringify(entry)];
    this.requireWriter().append(lines);
    this.headerWritten = true;
  }

  private requireWriter(): SessionBackend {
    if (this.backend && this.unmigratedVersion === undefined) return this.backend;
    if (this.closed) throw new Error(`${this.location}: session is closed; open it again to write`);
    if (this.unmigratedVersion !== undefined) {
      throw new Error(
        `${this.location}: format v${this.unmigratedVersion} file opened without migration; open it with migration (or run \`bonsai migrate\`) before writing`,
      );
    }
    throw new Error(`${this.location}: session was opened read-only`);
  }

  // ---------------------------------------------------------------- navigation

  /** Moves the leaf to an existing entry. Persisted by the next append, persistLeaf() or close(). */
  branch(id: string): void {
    if (!this.index.has(id)) throw new Error(`Entry ${id} not found`);
    this.moveLeaf(id);
  }

  /** Moves the leaf before the first entry: the next append starts a new root. */
  resetLeaf(): void {
    this.moveLeaf(null);
  }

  private moveLeaf(id: string | null): void {
    if (id === this.leafId) return;
    this.leafId = id;
    this.leafMoved = true;
  }

  /**
   * Makes the current leaf survive a reload. A reader takes the last entry of the file as the
   * leaf, so when the leaf was moved without appending, a `bonsai.checkout` custom entry is added
   * under it (null leaf: a new root). Custom entries never reach the model.
   */
  persistLeaf(): void {
    if (!this.leafMoved) return;
    const target = this.leafId;
    if (target === this.read(() => leafFromFile(this.index))) {
      this.leafMoved = false;
      return;
    }
    this.append<CustomEntry>({ type: "custom", customType: CHECKOUT_CUSTOM_TYPE, data: { leafId: target } });
    // The checkout entry is bookkeeping: the logical leaf stays the target, so the next append
    // hangs off the target rather than off the checkout entry.
    this.leafId = target;
    this.leafMoved = false;
  }

  /** Moves the leaf and persists the move immediately. */
  checkout(id: string | null): void {
    if (id === null) this.resetLeaf();
    else this.branch(id);
    this.persistLeaf();
  }

  /** Attaches a branch summary to `fromId` (null: a new root) and makes it the leaf. */
  branchWithSummary<T = unknown>(fromId: string | null, summary: string, details?: T, fromExtension?: boolean): string {
    if (fromId !== null && !this.index.has(fromId)) throw new Error(`Entry ${fromId} not found`);
    const entry: NewEntry<BranchSummaryEntry> = { type: "branch_summary", fromId: fromId ?? "root", summary };
    if (details !== undefined) entry.details = details;
    if (fromExtension !== undefined) {
      entry.fromHook = fromExtension;
      entry.fromExtension = fromExtension;
    }
    return this.append<BranchSummaryEntry>(entry, fromId);
  }

  /**
   * Starts a new session holding only the root->leafId path (labels on it re-created after it).
   * Persisted managers write the new session atomically in the same store (a file in the same
   * directory, a new id in the same database) and switch to it; returns its location.
   * In memory, the entries are replaced and undefined is returned.
   */
  createBranchedSession(leafId: string): string | undefined {
    const path = this.getBranch(leafId);
    if (path.length === 0) throw new Error(`Entry ${leafId} not found`);
    this.persistLeaf();
    const kept = chainPath(path.filter((e) => e.type !== "label"));
    const keptIds = new Set(kept.map((e) => e.id));
    const header = newHeader(this.header.cwd);
    if (this.location) header.parentSession = this.location;
    const labels: LabelEntry[] = [];
    let parentId = kept[kept.length - 1]?.id ?? null;
    for (const entry of kept) {
      const label = this.index.label(entry.id);
      if (label === undefined) continue;
      const id = generateEntryId(keptIds);
      keptIds.add(id);
      labels.push({ type: "label", id, parentId, timestamp: new Date().toISOString(), targetId: entry.id, label });
      parentId = id;
    }
    const entries = [...kept, ...labels];
    this.header = header;
    this.index = new TreeIndex(entries);
    this.leafId = leafFromFile(this.index);
    this.leafMoved = false;
    if (!this.location) return undefined;

    const next = this.requireWriter().openSibling(header);
    next.backend.rewrite(toLines([header, ...entries]));
    const old = this.backend!.close();
    if (old) {
      // reported by the next flush() or close(), not as an unhandled rejection in between
      old.catch(() => {});
      this.retired.push(old);
    }
    this.backend = next.backend;
    this.location = next.location;
    this.headerWritten = true;
    return next.location;
  }

  // ---------------------------------------------------------------- rewriting

  /**
   * Replaces the message of a message entry in memory (pruning and restoring tool output); the
   * entry keeps its id, parent and place. Nothing is written: call rewriteFile() to persist.
   */
  replaceMessage(entryId: string, message: AgentMessage): void {
    if (this.location && !this.backend) throw new Error(`${this.location}: session was opened read-only`);
    const entry = this.read(() => this.index.get(entryId));
    if (!entry) throw new Error(`Entry ${entryId} not found`);
    if (entry.type !== "message") throw new Error(`Entry ${entryId} is a ${entry.type} entry, not a message`);
    this.index.replaceMessage(entryId, message);
  }

  /**
   * Rewrites the whole file from memory, atomically (after pruning or renaming). Lines that were
   * skipped on load are not in memory, and bytes that were not UTF-8 were read as replacement
   * characters, so in either case the original is kept as a backup first.
   */
  rewriteFile(): void {
    if (!this.location) return;
    const writer = this.requireWriter();
    // every body first: one found invalid adds a skipped line to the issues, and so a backup
    const entries = this.read(() => this.index.entries);
    if (this.issues.some((i) => i.skipped || i.kind === "invalid-utf8")) writer.backup();
    writer.rewrite(toLines([this.header, ...entries]));
    this.headerWritten = true;
  }

  /**
   * Writes to disk a migration that `open(…, {migrate: false})` kept in memory (a backup of the
   * old file first), so the session can be written to. Lets a command decide late, once it knows
   * it will write, and leave an older file untouched otherwise. Returns the backup's path, or
   * undefined when there was nothing to migrate.
   */
  persistMigration(): string | undefined {
    if (this.unmigratedVersion === undefined || !this.location || !this.backend) return undefined;
    const backupPath = this.backend.backup();
    this.backend.rewrite(toLines([this.header, ...this.index.entries]));
    this.unmigratedVersion = undefined;
    this.headerWritten = true;
    return backupPath;
  }

  /**
   * Makes every write so far durable (fsync for files, a synced commit for SQLite, every queued
   * write committed for PostgreSQL). File and SQLite do it before returning and throw any error
   * at once; the promise says when PostgreSQL is done, and rejects with its first failed write.
   */
  flush(): Promise<void> {
    return settled([this.backend?.flush(), ...this.retired]);
  }

  /**
   * Persists a moved leaf, flushes and gives up the writer lock. File and SQLite finish before
   * returning; for PostgreSQL await the promise, which rejects if any write failed.
   */
  close(): Promise<void> {
    const pending: (void | Promise<void>)[] = this.retired;
    this.retired = [];
    try {
      if (this.backend) {
        try {
          const writable = this.unmigratedVersion === undefined;
          if (writable && (this.headerWritten || this.index.size > 0)) this.persistLeaf();
        } finally {
          pending.push(this.backend.close());
          this.backend = undefined;
        }
      }
    } catch (error) {
      // the error thrown here is the one to report; a queued store's rejection would repeat it
      settled(pending).catch(() => {});
      throw error;
    } finally {
      this.index.close();
      this.closed = true;
    }
    return settled(pending);
  }
}

/**
 * The leaf a file implies: its last entry, unless that is a bonsai.checkout marker, which stands
 * for the entry it was written under (or for "before the first entry" when it is a root).
 */
export function leafFromFile(index: TreeIndex): string | null {
  const last = index.last();
  if (!last) return null;
  if (isCheckoutMarker(last)) {
    return last.parentId !== null && index.has(last.parentId) ? last.parentId : null;
  }
  return last.id;
}

/**
 * Re-links a root-first path whose label entries were taken out: an entry that hung off a dropped
 * label would otherwise point at a parent that is not in the new session, and cut its context short.
 */
function chainPath(path: readonly SessionEntry[]): SessionEntry[] {
  return path.map((entry, i) => {
    if (i === 0 || entry.parentId === path[i - 1].id) return entry;
    return { ...entry, parentId: path[i - 1].id };
  });
}

/** One promise for work that is done (undefined) or still running (PostgreSQL); rejects with the first failure. */
function settled(work: readonly (void | Promise<void>)[]): Promise<void> {
  const running = work.filter((w): w is Promise<void> => w instanceof Promise);
  if (running.length === 0) return Promise.resolve();
  return Promise.all(running).then(() => undefined);
}

export type { FileEntry, OpenOptions };
