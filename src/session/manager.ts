/**
 * SessionManager: a session's entries as a tree, with the file (or nothing, in memory) behind
 * it. Appends write one line each as soon as the entry exists; rewrites are atomic; a lock
 * keeps a second writer out; the leaf survives a reload (see persistLeaf).
 */
import { copyFileSync, existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { AgentMessage, ImageContent, TextContent } from "../messages/types.js";
import { generateEntryId, generateSessionId } from "./ids.js";
import { type BodyLoading, type LoadedIndex, type LoadIssue, loadSessionIndex, SessionFileError } from "./load.js";
import { migrateSessionEntries, sessionVersion } from "./migrate.js";
import { describePathProblem, type PathProblem } from "./path.js";
import { type AppendOptions, SessionFileWriter, toJsonl, writeFileAtomic } from "./storage.js";
import { TreeIndex } from "./tree.js";
import {
  CHECKOUT_CUSTOM_TYPE,
  CURRENT_SESSION_VERSION,
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
} from "./types.js";

export interface OpenOptions extends AppendOptions {
  /** read without taking the writer lock; every write then throws */
  readOnly?: boolean;
  /** hears every skipped or suspicious line and every path problem */
  onWarning?: (message: string) => void;
  /** migrate a v1/v2 file on disk when opened for writing (default true); a backup is kept */
  migrate?: boolean;
  /** hears that a v1/v2 file was migrated: in memory, and on disk when `backupPath` is set */
  onMigrate?: (migration: { fromVersion: number; backupPath?: string }) => void;
  /**
   * How message bodies are loaded (default "checked"): "checked" parses and validates every
   * line at open but keeps message bodies on disk and reads them back when used (the file stays
   * open until close()); "trusted" does not even parse message lines in the usual shape, so a
   * damaged body throws when it is first read instead of being skipped at open; "eager" keeps
   * every parsed entry in memory. See BodyLoading.
   */
  bodies?: BodyLoading;
}

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
  private writer: SessionFileWriter | undefined;
  private closed = false;
  /** the file on disk is still this older format (opened with migrate: false): writing would mix formats */
  private unmigratedVersion: number | undefined;
  private headerWritten: boolean;
  private readonly issues: LoadIssue[];
  private readonly warn: (message: string) => void;
  private readonly readOnly: boolean;

  private constructor(
    private sessionFile: string | undefined,
    header: SessionHeader,
    entries: SessionEntry[] | TreeIndex,
    options: OpenOptions & {
      headerWritten: boolean;
      issues?: LoadIssue[];
      writer?: SessionFileWriter;
      unmigratedVersion?: number;
    },
  ) {
    this.header = header;
    this.headerWritten = options.headerWritten;
    this.issues = options.issues ?? [];
    this.warn = options.onWarning ?? (() => {});
    this.readOnly = options.readOnly ?? false;
    this.writer = options.writer;
    this.unmigratedVersion = options.unmigratedVersion;
    this.index = entries instanceof TreeIndex ? entries : new TreeIndex(entries);
    this.leafId = leafFromFile(this.index);
  }

  // ---------------------------------------------------------------- construction

  /** Opens an existing session file (or starts one at that path when it does not exist yet). */
  static open(path: string, options: OpenOptions = {}): SessionManager {
    const file = resolve(path);
    if (!existsSync(file)) {
      if (options.readOnly) throw new SessionFileError("NOT_FOUND", file, "no such file");
      const writer = new SessionFileWriter(file, { ...options, endsWithNewline: true });
      return new SessionManager(file, newHeader(process.cwd()), [], { ...options, headerWritten: false, writer });
    }
    // Take the lock before reading, so no other writer changes the file between read and append.
    const writer = options.readOnly ? undefined : new SessionFileWriter(file, { ...options, lock: true });
    let loaded: LoadedIndex | undefined;
    try {
      try {
        loaded = loadSessionIndex(file, options.bodies ?? "checked");
      } catch (error) {
        // An empty file holds nothing to lose: start a fresh session in it.
        if (error instanceof SessionFileError && error.code === "EMPTY" && writer) {
          return new SessionManager(file, newHeader(process.cwd()), [], { ...options, headerWritten: false, writer });
        }
        throw error;
      }
      for (const issue of loaded.issues) options.onWarning?.(`${file}:${issue.line}: ${issue.message}`);
      const header = loaded.header;
      const fromVersion = sessionVersion([header]);
      let entries: SessionEntry[] | TreeIndex = loaded.index;
      let migrated = false;
      let fileEntries: FileEntry[] = [];
      if (loaded.unmigrated) {
        // older formats were read in full and left out of the index, to be migrated first
        fileEntries = [header, ...loaded.unmigrated];
        migrated = migrateSessionEntries(fileEntries);
        entries = fileEntries.slice(1) as SessionEntry[];
      }
      if (migrated && writer && options.migrate !== false) {
        const backupPath = backupFile(file);
        writer.rewrite(toJsonl(fileEntries));
        options.onMigrate?.({ fromVersion, backupPath });
      } else {
        if (migrated) options.onMigrate?.({ fromVersion });
        if (writer && !loaded.endsWithNewline) writer.markUnterminated();
      }
      return new SessionManager(file, header, entries, {
        ...options,
        headerWritten: true,
        issues: loaded.issues,
        writer,
        unmigratedVersion: migrated && writer && options.migrate === false ? fromVersion : undefined,
      });
    } catch (error) {
      loaded?.index.close();
      writer?.close();
      throw error;
    }
  }

  /** A new persisted session for `cwd`, in `dir` (default: bonsai's session directory for cwd). */
  static create(cwd: string, dir?: string, options: AppendOptions = {}): SessionManager {
    const header = newHeader(cwd);
    const fileTime = header.timestamp.replace(/[:.]/g, "-");
    const file = join(resolve(dir ?? defaultSessionDir(cwd)), `${fileTime}_${header.id}.jsonl`);
    const writer = new SessionFileWriter(file, { ...options, endsWithNewline: true });
    return new SessionManager(file, header, [], { headerWritten: false, writer });
  }

  /** A session that never touches the disk. */
  static inMemory(cwd: string = process.cwd()): SessionManager {
    return new SessionManager(undefined, newHeader(cwd), [], { headerWritten: false });
  }

  // ---------------------------------------------------------------- reading

  getSessionFile(): string | undefined {
    return this.sessionFile;
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
    return this.sessionFile !== undefined;
  }

  /** Lines that were skipped or looked suspicious when the file was read. */
  getLoadIssues(): readonly LoadIssue[] {
    return this.issues;
  }

  /** All entries in file order. The array is the manager's own: do not mutate it. */
  getEntries(): readonly SessionEntry[] {
    return this.index.entries;
  }

  getEntry(id: string): SessionEntry | undefined {
    return this.index.get(id);
  }

  getLeafId(): string | null {
    return this.leafId;
  }

  getLeafEntry(): SessionEntry | undefined {
    return this.leafId ? this.index.get(this.leafId) : undefined;
  }

  getChildren(id: string): SessionEntry[] {
    return [...this.index.children(id)];
  }

  getLabel(id: string): string | undefined {
    return this.index.label(id);
  }

  /** Root-first path to `fromId` (default: the leaf), including metadata entries. */
  getBranch(fromId?: string | null): SessionEntry[] {
    return this.index.branch(fromId === undefined ? this.leafId : fromId, this.reportPathProblem);
  }

  getTree(): SessionTreeNode[] {
    return this.index.tree(this.reportPathProblem);
  }

  /** The session's name: the newest session_info entry, else the header title. */
  getSessionName(): string | undefined {
    const info = this.index.findLast("session_info");
    if (info?.type === "session_info") return info.name?.trim() || undefined;
    return this.header.title || undefined;
  }

  buildSessionContext(leafId: string | null = this.leafId): SessionContext {
    return this.index.context(leafId, this.reportPathProblem);
  }

  private readonly reportPathProblem = (problem: PathProblem) => this.warn(describePathProblem(problem));

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
    if (!this.sessionFile) return;
    const text = this.headerWritten ? toJsonl([entry]) : toJsonl([this.header, entry]);
    this.requireWriter().append(text);
    this.headerWritten = true;
  }

  private requireWriter(): SessionFileWriter {
    if (this.writer && this.unmigratedVersion === undefined) return this.writer;
    if (this.closed) throw new Error(`${this.sessionFile}: session is closed; open it again to write`);
    if (this.unmigratedVersion !== undefined) {
      throw new Error(
        `${this.sessionFile}: format v${this.unmigratedVersion} file opened without migration; open it with migration (or run \`bonsai migrate\`) before writing`,
      );
    }
    throw new Error(`${this.sessionFile}: session was opened read-only`);
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
    if (target === leafFromFile(this.index)) {
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
   * Persisted managers write the new file atomically and switch to it; returns its path.
   * In memory, the entries are replaced and undefined is returned.
   */
  createBranchedSession(leafId: string): string | undefined {
    const path = this.getBranch(leafId);
    if (path.length === 0) throw new Error(`Entry ${leafId} not found`);
    this.persistLeaf();
    const kept = chainPath(path.filter((e) => e.type !== "label"));
    const keptIds = new Set(kept.map((e) => e.id));
    const header = newHeader(this.header.cwd);
    if (this.sessionFile) header.parentSession = this.sessionFile;
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
    if (!this.sessionFile) return undefined;

    const dir = resolve(this.sessionFile, "..");
    const file = join(dir, `${header.timestamp.replace(/[:.]/g, "-")}_${header.id}.jsonl`);
    writeFileAtomic(file, toJsonl([header, ...entries]));
    this.writer?.close();
    this.writer = new SessionFileWriter(file, { endsWithNewline: true });
    this.sessionFile = file;
    this.headerWritten = true;
    return file;
  }

  // ---------------------------------------------------------------- rewriting

  /**
   * Replaces the message of a message entry in memory (pruning and restoring tool output); the
   * entry keeps its id, parent and place. Nothing is written: call rewriteFile() to persist.
   */
  replaceMessage(entryId: string, message: AgentMessage): void {
    if (this.sessionFile && !this.writer) throw new Error(`${this.sessionFile}: session was opened read-only`);
    const entry = this.index.get(entryId);
    if (!entry) throw new Error(`Entry ${entryId} not found`);
    if (entry.type !== "message") throw new Error(`Entry ${entryId} is a ${entry.type} entry, not a message`);
    entry.message = message;
  }

  /**
   * Rewrites the whole file from memory, atomically (after pruning or renaming). Lines that were
   * skipped on load are not in memory, and bytes that were not UTF-8 were read as replacement
   * characters, so in either case the original is kept as a backup first.
   */
  rewriteFile(): void {
    if (!this.sessionFile) return;
    const writer = this.requireWriter();
    if (this.issues.some((i) => i.skipped || i.kind === "invalid-utf8")) backupFile(this.sessionFile);
    writer.rewrite(toJsonl([this.header, ...this.index.entries]));
    this.headerWritten = true;
  }

  /**
   * Writes to disk a migration that `open(…, {migrate: false})` kept in memory (a backup of the
   * old file first), so the session can be written to. Lets a command decide late, once it knows
   * it will write, and leave an older file untouched otherwise. Returns the backup's path, or
   * undefined when there was nothing to migrate.
   */
  persistMigration(): string | undefined {
    if (this.unmigratedVersion === undefined || !this.sessionFile || !this.writer) return undefined;
    const backupPath = backupFile(this.sessionFile);
    this.writer.rewrite(toJsonl([this.header, ...this.index.entries]));
    this.unmigratedVersion = undefined;
    this.headerWritten = true;
    return backupPath;
  }

  /** Flushes appends to disk (fsync). */
  flush(): void {
    this.writer?.flush();
  }

  /** Persists a moved leaf, syncs and releases the writer lock. */
  close(): void {
    if (this.writer) {
      const writable = this.unmigratedVersion === undefined;
      if (writable && (this.headerWritten || this.index.size > 0)) this.persistLeaf();
      this.writer.close();
      this.writer = undefined;
    }
    this.index.close();
    this.closed = true;
  }
}

/**
 * The leaf a file implies: its last entry, unless that is a bonsai.checkout marker, which stands
 * for the entry it was written under (or for "before the first entry" when it is a root).
 */
export function leafFromFile(index: TreeIndex): string | null {
  const last = index.last();
  if (!last) return null;
  if (last.type === "custom" && last.customType === CHECKOUT_CUSTOM_TYPE) {
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

function newHeader(cwd: string): SessionHeader {
  const now = Date.now();
  return {
    type: "session",
    version: CURRENT_SESSION_VERSION,
    id: generateSessionId(now),
    timestamp: new Date(now).toISOString(),
    cwd,
  };
}

/** Keeps the file as it was before a migration or lossy rewrite: `<file>.bak-<time>`. */
function backupFile(path: string): string {
  const target = `${path}.bak-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  copyFileSync(path, target);
  return target;
}

export type { FileEntry };
