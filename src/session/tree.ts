/**
 * The in-memory index of a session's entries: by id, by parent, labels, and file order; adding is
 * O(1), a branch walk O(depth). Entries may arrive deferred (bodies still in the file, read when
 * first asked for: lazy-bodies.ts). Each node carries the nearest compaction, thinking-level change
 * and model source on its path (index-node.ts), so a leaf's context is built from the entries after
 * the latest compaction, and the last one is remembered (context-memo.ts); the forest is built in
 * forest.ts. Each entry knows where its line is in the store while it is what the line says, so a
 * rewrite copies the line instead of serializing the entry (stored-lines.ts). A replay of the open
 * index is linked only when a read needs every entry; until then the last entry's context comes
 * from the few nodes it needs (defer, later-nodes.ts).
 */
import type { BodyReader } from "../storage/bodies.js";
import type { CallTable } from "../storage/load-types.js";
import type { LineSource } from "../storage/line-source.js";
import { contextFromPath } from "../format/context.js";
import { DIALECTS, type Dialect, DialectEvidence } from "../format/dialects/index.js";
import type { IdTable } from "./id-table.js";
import { type PathProblem, pathToRoot } from "../format/path.js";
import type { AgentMessage } from "../format/message-types.js";
import type { ModelRef, SessionContext, SessionEntry, SessionHeader, SessionTreeNode } from "../format/entry-types.js";
import { ContextMemo } from "./context-memo.js";
import { buildForest } from "./forest.js";
import { childrenOf, entryNode, IndexNode, pathIds, relinkModels, stepUp } from "./index-node.js";
import { NodeLinks } from "./node-links.js";
import { LaterNodes } from "./later-nodes.js";
import { LazyBodies } from "./lazy-bodies.js";
import { StoredLines } from "./stored-lines.js";

// src/index.ts, the CLI and tests take flattenTree from here
export { flattenTree } from "./forest.js";

const EMPTY_CONTEXT = (): SessionContext => ({ messages: [], thinkingLevel: "off", model: null });

export class TreeIndex {
  /** the entries linked so far (node-links.ts) */
  private readonly links = new NodeLinks();
  private readonly labelled = new Map<string, string>();
  /** a replayed open index's entries, linked on the first read that needs them (defer, later-nodes.ts) */
  private later: LaterNodes | undefined;
  /** every entry in file order; kept only while no body is pending */
  private all: SessionEntry[] | undefined = [];
  private readonly bodies = new LazyBodies();
  private readonly memo = new ContextMemo(this.bodies);
  /** where each line is in the store, and the entries changed since (stored-lines.ts) */
  private readonly stored = new StoredLines();
  /** what the entries read so far show of the agent that wrote them (format/dialects/detect.ts) */
  private readonly evidence = new DialectEvidence();

  constructor(entries: Iterable<SessionEntry> = []) {
    for (const entry of entries) this.add(entry);
  }

  // every entry linked, for the reads that need them all
  private get nodes(): IndexNode[] {
    return this.whole().nodes;
  }
  private get byId(): IdTable<IndexNode> {
    return this.whole().byId;
  }
  private get waiting(): Map<string | null, IndexNode[]> {
    return this.whole().waiting;
  }
  private get labels(): Map<string, string> {
    this.whole();
    return this.labelled;
  }

  /** Links what a replay left for later, in file order, with the nodes made meanwhile. */
  private whole(): NodeLinks {
    const later = this.later;
    this.later = undefined;
    later?.drain((node, parsed) => (parsed ? this.insert(parsed, true, node) : this.links.link(node, true)));
    return this.links;
  }

  /** How many entries are linked into the tree: all of them, unless a replayed index left them for later (defer). */
  get linkedCount(): number {
    return this.links.nodes.length;
  }

  /** How many entries context() has turned into messages so far: shows whether it reused the last one. */
  get contextConversions(): number {
    return this.memo.conversions;
  }

  get size(): number {
    return this.links.nodes.length + (this.later?.count ?? 0);
  }

  /** Every entry in file order (bodies still on disk are read first). Do not mutate the array. */
  get entries(): readonly SessionEntry[] {
    this.whole();
    if (!this.all) {
      this.bodies.load(this.nodes);
      this.all = this.nodes.map((n) => n.entry!);
    }
    return this.all;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  get(id: string): SessionEntry | undefined {
    const node = this.byId.get(id);
    return node && this.bodies.entryOf(node);
  }

  /** The last entry in file order: the leaf a reader infers from the file. */
  last(): SessionEntry | undefined {
    const node = this.later ? this.later.last() : this.links.nodes[this.links.nodes.length - 1];
    return node && this.bodies.entryOf(node);
  }

  /** The newest entry of a type, reading no other body. */
  findLast(type: string): SessionEntry | undefined {
    const parsed = this.later?.lastParsed(type);
    if (parsed !== undefined) return parsed ?? undefined; // the parsed entries tell, nothing linked
    for (let i = this.nodes.length - 1; i >= 0; i--) if (this.nodes[i].type === type) return this.bodies.entryOf(this.nodes[i]);
    return undefined;
  }

  /** Every entry of a type in file order, reading no other body. */
  findAll(type: string): SessionEntry[] {
    const found: IndexNode[] = [];
    for (const node of this.nodes) if (node.type === type) found.push(node);
    return this.bodies.load(found);
  }

  /** Adds an entry; a later entry with an id already indexed takes that id over. */
  add(entry: SessionEntry): void {
    this.whole();
    this.insert(entry, false, entryNode(entry));
  }

  /** Adds an entry unless its id is indexed (then false, nothing changed), read from `line` at `offset` for `length` bytes (-1: none). For loaders. */
  addIfNew(entry: SessionEntry, line = 0, offset = -1, length = 0): boolean {
    this.whole();
    return this.insert(entry, true, entryNode(entry, line, offset, length));
  }

  private insert(entry: SessionEntry, refuseDuplicate: boolean, node: IndexNode): boolean {
    if (!this.links.link(node, refuseDuplicate)) return false;
    this.evidence.note(entry.type, node.role, entry as unknown as Record<string, unknown>);
    this.all?.push(entry);
    if (entry.type === "label") {
      if (entry.label) this.labelled.set(entry.targetId, entry.label);
      else this.labelled.delete(entry.targetId);
    }
    return true;
  }

  /**
   * Indexes an entry whose body stays in the file, at `offset` for `length` bytes (line `line`);
   * attachBodies() gives the reader that fetches it. For loaders.
   */
  addDeferred(type: string, id: string, parentId: string | null, role: string | undefined, line: number, offset: number, length: number): boolean {
    this.whole();
    if (!this.links.link(new IndexNode(id, parentId, type, role, undefined, line, offset, length), true)) return false;
    this.evidence.note(type, role);
    this.bodies.deferred(1);
    this.all = undefined;
    return true;
  }

  /** EntrySink.defer: a replay's calls, linked when first needed (later-nodes.ts). For loaders. */
  defer(calls: CallTable, entries: readonly SessionEntry[]): boolean {
    if (this.links.nodes.length > 0 || this.later) return false;
    const later = new LaterNodes(calls, entries);
    later.evidence((type, role, fields) => this.evidence.note(type, role, fields));
    this.bodies.deferred(later.deferred);
    if (later.deferred > 0) this.all = undefined;
    this.later = later;
    return true;
  }

  /** EntrySink.expect: `distinct` ids (none indexed yet) are placed in the table on the first lookup. For loaders. */
  expect(count: number, distinct = false): void {
    this.links.byId.expect(count, distinct && this.links.nodes.length === 0 && !this.later);
  }

  /** The reader for the bodies of deferred entries; the index closes it once every body is read. */
  attachBodies(bodies: BodyReader): void {
    this.bodies.attach(bodies);
  }

  /** Where the header's line is. For loaders. */
  headerAt(line: number, offset: number, length: number): void {
    this.stored.headerLine = { line, offset, length };
  }

  /** Where oh-my-pi's title slot is, the line before the header, and its text as read. For loaders. */
  titleSlotAt(line: number, offset: number, length: number, text: string): void {
    this.stored.titleSlot = { line, offset, length, text };
    this.evidence.titleSlot();
  }

  /** The dialect the session is written in, as its lines so far show it. */
  get dialect(): Dialect {
    return DIALECTS[this.evidence.dialect];
  }

  /** Where the lines the entries were read from are, to copy unchanged ones into a rewrite. For loaders. */
  attachLines(lines: LineSource): void {
    this.stored.lines = lines;
  }

  children(id: string | null): readonly SessionEntry[] {
    const parent = id === null ? undefined : this.byId.get(id);
    const nodes = parent ? childrenOf(parent) : this.waiting.get(id);
    return nodes ? this.bodies.load(nodes) : [];
  }

  label(id: string): string | undefined {
    return this.labels.get(id);
  }

  /** Root-first path ending at `id` (the entry itself included); empty for an unknown id. */
  branch(id: string | null | undefined, onProblem?: (p: PathProblem) => void, from?: "context"): SessionEntry[] {
    if (!id) return [];
    const node = this.byId.get(id);
    if (!node) return [];
    if (!node.rooted) return pathToRoot(this.bodies.entryOf(node), (x) => this.get(x), onProblem);
    // One walk to size the array, one to fill it from the leaf end, a body read only for an entry
    // still on disk; from "context", both stop where the latest compaction's context starts.
    const up = stepUp(node, from === "context");
    let depth = 0;
    for (let n: IndexNode | undefined = node; n; n = up(n)) depth++;
    const path = new Array<SessionEntry>(depth);
    let missing = false;
    let i = depth;
    for (let n: IndexNode | undefined = node; n && !missing; n = up(n)) {
      if (n.entry) path[--i] = n.entry;
      else missing = true;
    }
    if (!missing) return path;
    const nodes = new Array<IndexNode>(depth);
    i = depth;
    for (let n: IndexNode | undefined = node; n; n = up(n)) nodes[--i] = n;
    return this.bodies.load(nodes);
  }

  /**
   * What the model sees at `leafId` (see contextSegments in format/context.ts): null is "before
   * the first entry", an unknown id falls back to the last entry. A rooted leaf's context comes
   * from the remembered one (context-memo.ts). Every call returns a new object and a new messages
   * array; the message objects are shared with the session and earlier results, so treat them as
   * read-only and change a message through replaceMessage.
   */
  context(leafId: string | null | undefined, onProblem?: (p: PathProblem) => void): SessionContext {
    if (leafId === null) return EMPTY_CONTEXT();
    const beforeLinking = this.later && (leafId === undefined || leafId === this.later.lastId()) ? this.earlyContext(this.later) : undefined;
    if (beforeLinking) return beforeLinking;
    const leaf = (leafId ? this.byId.get(leafId) : undefined) ?? this.nodes[this.nodes.length - 1];
    if (!leaf) return EMPTY_CONTEXT();
    const dialect = this.dialect;
    if (!leaf.rooted) return contextFromPath(pathToRoot(this.bodies.entryOf(leaf), (x) => this.get(x), onProblem), dialect);
    // the index tracks the latest thinking level and model per entry; another reading walks the path
    if (!dialect.settingsFromLatest) return contextFromPath(this.branch(leaf.id, onProblem), dialect);
    // no context from the memo: the leaf's model source was replaced by another role's message
    return this.memo.context(leaf, dialect) ?? contextFromPath(this.branch(leaf.id, onProblem), dialect);
  }

  /** The model of context(leafId), reading as few bodies as it can (the leaf's model source alone, when the path is rooted). */
  model(leafId: string | null | undefined, onProblem?: (p: PathProblem) => void): ModelRef | null {
    const leaf = leafId ? this.byId.get(leafId) : undefined;
    const fromSource = leaf?.rooted && this.dialect.settingsFromLatest ? this.memo.model(leaf) : undefined;
    return fromSource !== undefined ? fromSource : this.context(leafId, onProblem).model;
  }

  /** The last entry's context from the few nodes it needs, while a replay is not linked (later-nodes.ts); undefined when they cannot tell. */
  private earlyContext(later: LaterNodes): SessionContext | undefined {
    const dialect = this.dialect;
    if (!dialect.settingsFromLatest) {
      const path = later.lastPath();
      return path && contextFromPath(this.bodies.load(path), dialect);
    }
    const leaf = later.contextLeaf();
    return leaf && this.memo.context(leaf, dialect);
  }

  /**
   * Replaces the message of a message entry in memory (pruning and restoring tool output), in its
   * place. A rewrite serializes it, or writes `line` (the original line a restore puts back; put
   * back the old message and its stored line is copied again). The remembered context is dropped,
   * and a change of role to or from assistant works out the model of every entry below again.
   */
  replaceMessage(id: string, message: AgentMessage, line?: string): void {
    const node = this.byId.get(id);
    const entry = node && this.bodies.entryOf(node);
    if (!node || entry?.type !== "message") throw new Error(`Entry ${id} is not a message entry of this session`);
    let edit = this.stored.edits.get(node);
    if (!edit) {
      // the stored line no longer says what the entry does: a rewrite serializes it (or writes `line`)
      if (message !== entry.message) {
        edit = { message: entry.message, offset: node.offset };
        this.stored.edits.set(node, edit);
        node.offset = -1;
      }
    } else if (message === edit.message) {
      // back to what its line says (a failed rewrite undone): the line is copied again
      node.offset = edit.offset;
      this.stored.edits.delete(node);
      edit = undefined;
    }
    if (edit) edit.text = line;
    entry.message = message;
    this.memo.forget();
    if (node.role === message.role) return;
    const wasAssistant = node.role === "assistant";
    node.role = message.role;
    if (node.rooted && (wasAssistant || message.role === "assistant")) relinkModels(node);
  }

  /**
   * The session as lines for a rewrite of its store: the header, then every entry in file order,
   * each unchanged one copied from the store byte for byte (StoredLines.forRewrite).
   */
  storedLines(header: SessionHeader, headerChanged: boolean): string[] {
    return this.stored.forRewrite(this.nodes, header, headerChanged, () => this.bodies.load(this.nodes));
  }

  /** The line each entry of `ids` has in the store, when unchanged since read or last rewritten, or given with its change (replaceMessage); else undefined. */
  storedLinesOf(ids: readonly string[]): (string | undefined)[] {
    return this.stored.linesOf(ids.map((id) => this.byId.get(id)));
  }

  /**
   * The store now holds `lines`, what storedLines gave: each line's place in them becomes its
   * entry's, so the next rewrite copies from them too, and no entry counts as changed. Bodies
   * still on disk are read from the new file from now on.
   */
  rewritten(lines: readonly string[]): void {
    if (this.stored.rewritten(lines, this.nodes)) this.bodies.close(); // its descriptor is on the replaced file; the next read opens the new one
  }

  /** The forest of entries (see buildForest); every body is read first, in file order. */
  tree(onProblem?: (p: PathProblem) => void): SessionTreeNode[] {
    void this.entries;
    return buildForest(this.nodes, this.byId, this.labels, onProblem);
  }

  /** tree() keeping no body it reads: each entry goes to `visit`, and a message's node holds a stand-in (LazyBodies.visit). */
  outline(visit: (entry: SessionEntry) => void, onProblem?: (p: PathProblem) => void, known?: (id: string) => string | undefined): SessionTreeNode[] {
    const standIns = this.bodies.visit(this.nodes, visit, known && ((node) => known(node.id)));
    return buildForest(this.nodes, this.byId, this.labels, onProblem, (node) => node.entry ?? standIns.get(node)!);
  }

  /** The ids of branch(id), reading no body when the path is rooted. */
  branchIds(id: string | null | undefined, onProblem?: (p: PathProblem) => void): string[] {
    const node = id ? this.byId.get(id) : undefined;
    return node?.rooted ? pathIds(node) : this.branch(id, onProblem).map((e) => e.id);
  }

  /** Releases the file behind deferred bodies; a later read opens it again. */
  close(): void {
    this.bodies.close();
    this.memo.forget(); // a closed session is rarely read again: do not keep its path alive
  }
}
