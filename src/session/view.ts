/**
 * The read side of SessionManager (manager.ts adds construction and every change): what the
 * session holds, where it is stored, and the one guard every read of a body goes through.
 */
import type { Dialect } from "../format/dialects/index.js";
import type { StoreArchive, StoreKind } from "../storage/types.js";
import { InvalidBodyError } from "../storage/bodies.js";
import { forgetOpenIndex } from "../storage/open-index-file.js";
import type { LoadIssue } from "../storage/load.js";
import { loadFileIndex } from "../storage/reads.js";
import { describePathProblem, type PathProblem } from "../format/path.js";
import type { ModelRef, SessionContext, SessionEntry, SessionHeader, SessionTreeNode } from "../format/entry-types.js";
import type { OpenOptions, SessionParts } from "./opening.js";
import { leafFromFile } from "./leaf.js";
import { StoreHandle } from "./store-handle.js";
import { TreeIndex } from "./tree.js";

export class SessionView {
  protected index: TreeIndex;
  protected header: SessionHeader;
  protected leafId: string | null = null;
  /** where the session is stored, and whether it may be written */
  protected readonly store: StoreHandle;
  protected readonly issues: LoadIssue[];
  protected readonly warn: (message: string) => void;
  /** the file was read again in full after a message body turned out invalid (see read()) */
  private rereadInFull = false;

  protected constructor(parts: SessionParts, options: OpenOptions) {
    this.header = parts.header;
    this.issues = parts.issues ?? [];
    this.warn = options.onWarning ?? (() => {});
    this.store = new StoreHandle(parts);
    this.index = parts.entries instanceof TreeIndex ? parts.entries : new TreeIndex(parts.entries);
    this.store.migrateBeforeFirstWrite({
      current: () => ({ header: this.header, entries: this.index.entries }),
      written: (fromVersion, backupPath) => options.onMigrate?.({ fromVersion, backupPath }),
    });
    this.leafId = this.read(() => leafFromFile(this.index));
  }

  /** The session's file; undefined in memory and for database sessions (see getLocation). */
  getSessionFile(): string | undefined {
    return this.store.kind === "file" ? this.store.location : undefined;
  }

  /** Where the session is stored: a file path, or a `sqlite:…#ID` / `postgres://…#ID` location. */
  getLocation(): string | undefined {
    return this.store.location;
  }

  /**
   * The session's archive of pruned tool output, whatever its store (a sidecar file beside a
   * session file, a table in a database): what ops/prune.ts appends originals to and restores
   * them from. Undefined in memory, and when not open for writing.
   */
  getPrunedArchive(): StoreArchive | undefined {
    return this.store.archive;
  }

  /** The kind of store behind the session; undefined in memory. */
  getStoreKind(): StoreKind | undefined {
    return this.store.kind;
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
    return this.store.location !== undefined;
  }

  /** Lines that were skipped or looked suspicious when the file was read. */
  getLoadIssues(): readonly LoadIssue[] {
    return this.issues;
  }

  /** All entries in file order. The array is the manager's own: do not mutate it. */
  getEntries(): readonly SessionEntry[] {
    return this.read(() => this.index.entries);
  }

  /** How many entries the session holds, and the last in file order: what changed since a reader last looked, reading one body at most. */
  getEntryCount(): number {
    return this.index.size;
  }

  getLastEntry(): SessionEntry | undefined {
    return this.read(() => this.index.last());
  }

  getEntry(id: string): SessionEntry | undefined {
    return this.read(() => this.index.get(id));
  }

  /**
   * The lines entries have in the store, exactly (for those unchanged since they were read or
   * last rewritten; undefined for new and changed ones, unknown ids, and sessions in memory).
   */
  getStoredLines(entryIds: readonly string[]): (string | undefined)[] {
    return this.index.storedLinesOf(entryIds);
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

  /**
   * The end of the branch to `fromId` (default: the leaf) that its context is built from: from the
   * first entry the latest compaction keeps (that compaction when the entry is not on the path) to
   * the leaf; the whole branch when there is no compaction. What a check every turn reads instead
   * of the whole branch: its cost follows the context, not the session.
   */
  getContextBranch(fromId?: string | null): SessionEntry[] {
    return this.read(() => this.index.branch(fromId === undefined ? this.leafId : fromId, this.reportPathProblem, "context"));
  }

  getTree(): SessionTreeNode[] {
    return this.read(() => this.index.tree(this.reportPathProblem));
  }

  /**
   * The tree as getTree() gives it, read without keeping message bodies: each entry is handed to
   * `visit` once, in file order, and a message's node holds a stand-in with its type, id, parent id
   * and timestamp only. For a pass over every entry of a large session (a tree's previews), whose
   * bodies need not stay in memory. A message whose body is still in the file and whose timestamp
   * `known` gives (the caller keeps what it needs of it) is not read at all: its stand-in takes
   * that timestamp, which orders siblings.
   */
  getOutline(visit: (entry: SessionEntry) => void, known?: (id: string) => string | undefined): SessionTreeNode[] {
    return this.read(() => this.index.outline(visit, this.reportPathProblem, known));
  }

  /** The ids of getBranch(fromId), reading no body where it can. */
  getBranchIds(fromId?: string | null): string[] {
    return this.read(() => this.index.branchIds(fromId === undefined ? this.leafId : fromId, this.reportPathProblem));
  }

  /** Every entry of `type`, in file order, reading no other body (compactions, whose entries an open reads anyway). */
  getEntriesOfType(type: string): SessionEntry[] {
    return this.read(() => this.index.findAll(type));
  }

  /** The session's name: the newest session_info entry, else the header title. */
  getSessionName(): string | undefined {
    const info = this.read(() => this.index.findLast("session_info"));
    if (info?.type === "session_info") return info.name?.trim() || undefined;
    return this.header.title || undefined;
  }

  /** The dialect the session is written in (format/dialects/): whose context rule reads it, whose entries bonsai writes to it. */
  getDialect(): Dialect {
    return this.index.dialect;
  }

  /** buildSessionContext(leafId).model, without building the context where the index tells it. */
  getContextModel(leafId: string | null = this.leafId): ModelRef | null {
    return this.read(() => this.index.model(leafId, this.reportPathProblem));
  }

  buildSessionContext(leafId: string | null = this.leafId): SessionContext {
    return this.read(() => this.index.context(leafId, this.reportPathProblem));
  }

  /** path problems said so far: a damaged path is read again and again (each turn's context, each compaction's span), and said once */
  private readonly reportedPaths = new Set<string>();
  private readonly reportPathProblem = (problem: PathProblem) => {
    const message = describePathProblem(problem);
    if (this.reportedPaths.has(message)) return;
    this.reportedPaths.add(message);
    this.warn(message);
  };

  /**
   * Runs something that may read message bodies left on disk. A body that is well-formed JSON
   * but not a valid entry (bodies: "checked") makes the file be read again in full, once: that
   * line is then skipped and reported, as an open with bodies: "parsed" would have done, and the
   * read is tried again on the new index. Anything else is thrown as it is.
   */
  protected read<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      if (!(error instanceof InvalidBodyError) || !this.rereadParsed(error)) throw error;
      return run();
    }
  }

  /**
   * Replaces the index by a full read of the file, parsed and validated: the damaged line is
   * skipped and reported, as an open with bodies: "parsed" would have done. False when there is
   * no file to read again (or it was read again already).
   */
  private rereadParsed(cause: InvalidBodyError): boolean {
    const file = this.getSessionFile();
    if (this.rereadInFull || file === undefined) return false;
    this.rereadInFull = true;
    const loaded = loadFileIndex(file, "parsed", new TreeIndex());
    if (loaded.unmigrated) {
      loaded.index.close(); // an older format never leaves bodies on disk: not reached
      return false;
    }
    // the lines reported at open are reported again (a torn tail that appends have since
    // closed comes back as malformed JSON): only lines not reported yet are new
    const reported = new Set(this.issues.map((issue) => issue.line));
    const found = loaded.issues.some((issue) => issue.line === cause.line);
    // a line JSON.parse reads as valid (a key written twice) is kept, so only the cause names it;
    // a stale open index is dropped, and the line, valid as it is, is nothing to report
    if (cause.stale) forgetOpenIndex(file);
    const issues = found || cause.stale ? loaded.issues : [...loaded.issues, { kind: "invalid-entry" as const, line: cause.line, message: cause.problem, skipped: false }];
    for (const issue of issues) {
      if (reported.has(issue.line)) continue;
      this.issues.push(issue);
      this.warn(`${file}:${issue.line}: ${issue.message}`);
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
}
