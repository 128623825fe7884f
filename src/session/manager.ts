/**
 * SessionManager: a session's entries as a tree, with a store behind it (a JSONL file, a SQLite
 * or PostgreSQL database; see src/storage) or nothing, in memory. Appends write one line each as
 * soon as the entry exists; rewrites are atomic; a lock or lease keeps a second writer out; the
 * leaf survives a reload (see persistLeaf). Its reads are in view.ts, its hold on the store in
 * store-handle.ts, and how it comes to be in opening.ts.
 */
import type { AgentMessage, ImageContent, TextContent } from "../format/message-types.js";
import type { AppendOptions } from "../storage/file-writer.js";
import {
  createFileParts,
  createInStoreParts,
  defaultSessionDir,
  newHeader,
  type OpenOptions,
  openFileParts,
  openLocationParts,
  type SessionParts,
} from "./opening.js";
import { TreeIndex } from "./tree.js";
import {
  branchSummaryFields,
  contextEditFields,
  type CompactionExtras,
  compactionFields,
  customFields,
  customMessageFields,
  labelFields,
  modelChangeFields,
  type NewEntry,
  stampEntry,
} from "./new-entries.js";
import { branchedSession } from "./branched.js";
import { checkoutFields, leafFromFile } from "./leaf.js";
import { SessionView } from "./view.js";
import type { ContextEditEntry, FileEntry, MessageEntry, ModelChangeEntry, SessionEntry, SessionHeader, SessionInfoEntry, ThinkingLevelChangeEntry } from "../format/entry-types.js";
import { validateEntry } from "../format/validate.js";
import { retitledSlot, titleSlotOfLines } from "../format/title-slot.js";
import { errorText } from "../util/error-text.js";

export class SessionManager extends SessionView {
  /** the leaf was moved without an append; the file still implies the old one */
  private leafMoved = false;
  /** the header as its line in the store says (the one read, or last rewritten): a rewrite copies that line while it is still this object */
  private storedHeader: SessionHeader;

  private constructor(parts: SessionParts, options: OpenOptions = {}) {
    super(parts, options);
    this.storedHeader = parts.header;
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

  // ---------------------------------------------------------------- appending

  appendMessage(message: AgentMessage): string {
    return this.append<MessageEntry>({ type: "message", message });
  }

  appendThinkingLevelChange(thinkingLevel: string): string {
    return this.append<ThinkingLevelChangeEntry>({ type: "thinking_level_change", thinkingLevel });
  }

  /** Written in both spellings: pi reads provider/modelId, oh-my-pi reads model; `chat`: how bonsai chat reached it. */
  appendModelChange(provider: string, modelId: string, role?: string, chat?: ModelChangeEntry["chat"]): string {
    return this.append(modelChangeFields(provider, modelId, role, chat));
  }

  appendCompaction<T = unknown>(
    summary: string,
    firstKeptEntryId: string,
    tokensBefore: number,
    details?: T,
    fromExtension?: boolean,
    extra: CompactionExtras = {},
  ): string {
    const fields = compactionFields(summary, firstKeptEntryId, tokensBefore, details, fromExtension, extra);
    // as the file's agent writes one: pi 1.x keeps the system prompt and tools it replaces
    const own = this.getDialect().compactionFields(() => this.buildSessionContext().messages, Date.now());
    return this.append({ ...fields, ...own } as typeof fields);
  }

  appendCustomEntry<T = unknown>(customType: string, data?: T): string {
    return this.append(customFields(customType, data));
  }

  appendCustomMessageEntry<T = unknown>(
    customType: string,
    content: string | (TextContent | ImageContent)[],
    display: boolean,
    details?: T,
  ): string {
    return this.append(customMessageFields(customType, content, display, details));
  }

  /** Appends a context edit of `targetId` (pi 1.x: sent with other content, or left out with null). */
  appendContextEdit(targetId: string, replacement: ContextEditEntry["replacement"], prunedAt?: number): string {
    if (!this.index.has(targetId)) throw new Error(`Entry ${targetId} not found`);
    return this.append(contextEditFields(targetId, replacement, prunedAt));
  }

  /**
   * Appends copies of `entries` at the leaf, each under the one before: the same fields under a
   * new id, parent and time (undoing a compaction copies what came after it onto the branch before
   * it). One write: one that fails (a full disk) leaves none of them, so the file's last entry,
   * which a reader takes as the leaf, is never a copy part of the way through. Returns their ids.
   */
  appendCopies(entries: readonly SessionEntry[]): string[] {
    const copies: SessionEntry[] = [];
    const ids = new Set<string>();
    const taken = { has: (id: string) => this.index.has(id) || ids.has(id) };
    for (const { id: _id, parentId: _parent, timestamp: _time, ...fields } of entries) {
      const copy = this.stamped(fields as NewEntry<SessionEntry>, copies.at(-1)?.id ?? this.leafId, taken);
      copies.push(copy);
      ids.add(copy.id);
    }
    if (copies.length === 0) return [];
    this.store.append(this.header, ...copies); // written before they join the index
    for (const copy of copies) this.index.add(copy);
    this.leafId = copies[copies.length - 1].id;
    this.leafMoved = false;
    return copies.map((c) => c.id);
  }

  appendLabelChange(targetId: string, label?: string): string {
    if (!this.index.has(targetId)) throw new Error(`Entry ${targetId} not found`);
    return this.append(labelFields(targetId, label));
  }

  /**
   * Names the session: a session_info entry (pi) and the header title (oh-my-pi, a rewrite, in
   * which only the header line changes). A title it already has rewrites nothing.
   */
  appendSessionInfo(name: string): string {
    const trimmed = name.trim();
    const id = this.append<SessionInfoEntry>({ type: "session_info", name: trimmed });
    if (trimmed ? this.header.title === trimmed : !("title" in this.header)) return id;
    if (trimmed) this.header = { ...this.header, title: trimmed };
    else {
      const { title: _dropped, ...rest } = this.header;
      this.header = rest as SessionHeader;
    }
    if (this.store.headerWritten) this.rewriteFile();
    return id;
  }

  private append<E extends SessionEntry>(fields: NewEntry<E>, parentId: string | null = this.leafId): string {
    const entry = this.stamped(fields, parentId, this.index);
    this.store.append(this.header, entry); // written before it joins the index
    this.index.add(entry);
    this.leafId = entry.id;
    this.leafMoved = false;
    return entry.id;
  }

  /** A new entry of `fields` under `parentId`, with an id not `taken`; refused when it is not valid. */
  private stamped<E extends SessionEntry>(fields: NewEntry<E>, parentId: string | null, taken: { has(id: string): boolean }): E {
    const entry = stampEntry(fields, parentId, taken);
    // Types do not reach plain JavaScript: an entry every later read would warn about and skip
    // (a message without a role, content that is not text or blocks) is refused before it is written.
    const problem = validateEntry(entry);
    if (problem) throw new TypeError(`SessionManager: not appended, the ${entry.type} entry is invalid: ${problem}`);
    return entry;
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
   * under it (null leaf: a new root; see leaf.ts). Custom entries never reach the model.
   */
  persistLeaf(): void {
    if (!this.leafMoved) return;
    const target = this.leafId;
    if (target === this.read(() => leafFromFile(this.index))) {
      this.leafMoved = false;
      return;
    }
    this.writeLeaf();
  }

  /** Appends a checkout entry under the leaf: a reader of the file then takes it as the leaf. */
  private writeLeaf(): void {
    const target = this.leafId;
    this.append(checkoutFields(target));
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

  /**
   * Attaches a branch summary to `fromId` (null: a new root) and makes it the leaf. Its `fromId`
   * field says what the file's agent means by it: the destination, or the leaf that was left.
   */
  branchWithSummary<T = unknown>(fromId: string | null, summary: string, details?: T, fromExtension?: boolean): string {
    if (fromId !== null && !this.index.has(fromId)) throw new Error(`Entry ${fromId} not found`);
    const fields = branchSummaryFields(fromId, summary, details, fromExtension);
    fields.fromId = this.getDialect().branchSummaryFromId(fromId, this.leafId);
    return this.append(fields, fromId);
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
    const { header, entries } = branchedSession(path, (id) => this.index.label(id), this.header.cwd, this.store.location);
    this.header = header;
    this.index = new TreeIndex(entries);
    this.leafId = leafFromFile(this.index);
    this.leafMoved = false;
    if (!this.store.location) return undefined;
    return this.store.switchToSibling(header, entries);
  }

  // ---------------------------------------------------------------- rewriting

  /**
   * Replaces the message of a message entry in memory (pruning and restoring tool output); the
   * entry keeps its id, parent and place. Nothing is written: call rewriteFile() to persist. The
   * rewrite serializes the entry, or writes `line` as its line when given: the line it was stored
   * as before (see getStoredLines), which a restore puts back byte for byte.
   */
  replaceMessage(entryId: string, message: AgentMessage, line?: string): void {
    this.store.refuseIfReadOnly();
    const entry = this.read(() => this.index.get(entryId));
    if (!entry) throw new Error(`Entry ${entryId} not found`);
    if (entry.type !== "message") throw new Error(`Entry ${entryId} is a ${entry.type} entry, not a message`);
    this.index.replaceMessage(entryId, message, line);
  }

  /**
   * Rewrites the whole file atomically (after pruning or renaming). Every line whose entry was
   * not changed in memory (through replaceMessage; entries are never changed in place) is copied
   * from the store byte for byte; only new and changed entries, and a changed header, are
   * serialized (docs/ARCHITECTURE.md, storage decisions). Lines that were skipped on load are not
   * in memory, and bytes that were not UTF-8 were read as replacement characters, so in either
   * case the original is kept as a backup first.
   */
  rewriteFile(): void {
    if (!this.store.location) return;
    this.store.requireWriter(); // refused before any line is read
    // first: a body read here (where no stored lines were attached) and found invalid adds a
    // skipped line to the issues, and so a backup
    const lines = this.read(() => this.index.storedLines(this.header, this.header !== this.storedHeader));
    // omp takes the title from its slot over the header's: a renamed session's slot says the new name
    if (this.header.title !== this.storedHeader.title && titleSlotOfLines(lines)) {
      lines[0] = retitledSlot(lines[0], this.header.title ?? "", new Date().toISOString()) ?? lines[0];
    }
    const dropped = this.issues.filter((i) => i.skipped).length;
    const { backup, leafDisplaced, notCarried } = this.store.rewrite(lines, dropped > 0 || this.issues.some((i) => i.kind === "invalid-utf8" || i.kind === "glued-objects"));
    // the rewrite leaves out lines that could not be read: say where they still are
    const where = this.store.location;
    if (backup && dropped > 0) this.warn(`${where}: ${dropped} unreadable line${dropped === 1 ? " is" : "s are"} left out of the rewritten file; the file as it was is kept in ${backup}`);
    this.index.rewritten(lines);
    this.storedHeader = this.header;
    if (notCarried) this.warn(`${where}: rewritten, but lines another program appended just after could not be carried into it: ${notCarried}`);
    // another program's lines, carried to the end, came before bonsai's last: its leaf is written again after them
    if (leafDisplaced) {
      try {
        this.writeLeaf();
      } catch (error) {
        this.warn(`${where}: rewritten, but its leaf could not be written again after another program's lines (${errorText(error)}): a reader resumes at their last`);
      }
    }
  }

  /**
   * Writes to disk a migration that `open(…, {migrate: false})` kept in memory (a backup of the
   * old file first), so the session can be written to. Lets a command decide late, once it knows
   * it will write, and leave an older file untouched otherwise. Returns the backup's path, or
   * undefined when there was nothing to migrate.
   */
  persistMigration(): string | undefined {
    if (this.store.mode !== "unmigrated") return undefined;
    return this.store.persistMigration(this.header, this.index.entries);
  }

  /**
   * Makes every write so far durable (fsync for files, a synced commit for SQLite, every queued
   * write committed for PostgreSQL). File and SQLite do it before returning and throw any error
   * at once; the promise says when PostgreSQL is done, and rejects with its first failed write.
   */
  flush(): Promise<void> {
    return this.store.flush();
  }

  /**
   * Persists a moved leaf, flushes and gives up the writer lock. File and SQLite finish before
   * returning; for PostgreSQL await the promise, which rejects if any write failed.
   */
  close(): Promise<void> {
    try {
      return this.store.close(() => {
        if (this.store.headerWritten || this.index.size > 0) this.persistLeaf();
      });
    } finally {
      this.index.close();
    }
  }
}

export { defaultSessionDir, leafFromFile };
export type { CompactionExtras, FileEntry, OpenOptions };
