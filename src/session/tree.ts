/**
 * The in-memory index of a session's entries: by id, by parent, labels, and file order; adding is
 * O(1), a branch walk O(depth). Entries may arrive deferred (bodies still in the file, read when
 * first asked for: lazy-bodies.ts). Each node carries the nearest compaction, thinking-level change
 * and model source on its path (index-node.ts), so a leaf's context is built from the entries after
 * the latest compaction, and the last one is remembered (context-memo.ts); the forest is built in
 * forest.ts. Each entry knows where its line is in the store while it is what the line says, so a
 * rewrite copies the line instead of serializing the entry (storedLines; docs/ARCHITECTURE.md).
 */
import type { BodyReader } from "../storage/bodies.js";
import type { LineSource, StoredRange } from "../storage/line-source.js";
import { contextFromPath } from "../format/context.js";
import { DIALECTS, type Dialect, DialectEvidence } from "../format/dialects/index.js";
import { IdTable } from "./id-table.js";
import { type PathProblem, pathToRoot } from "../format/path.js";
import type { AgentMessage } from "../format/message-types.js";
import type { SessionContext, SessionEntry, SessionHeader, SessionTreeNode } from "../format/entry-types.js";
import { ContextMemo } from "./context-memo.js";
import { buildForest } from "./forest.js";
import { childrenOf, IndexNode, pathIds, relinkModels, sourcesModel, stepUp } from "./index-node.js";
import { LazyBodies } from "./lazy-bodies.js";

// src/index.ts, the CLI and tests take flattenTree from here
export { flattenTree } from "./forest.js";

const EMPTY_CONTEXT = (): SessionContext => ({ messages: [], thinkingLevel: "off", model: null });

export class TreeIndex {
  private readonly nodes: IndexNode[] = [];
  private readonly byId = new IdTable<IndexNode>(this.nodes, true);
  /** children whose parent id is null or not (yet) indexed, by that id */
  private readonly waiting = new Map<string | null, IndexNode[]>();
  private readonly labels = new Map<string, string>();
  /** every entry in file order; kept only while no body is pending */
  private all: SessionEntry[] | undefined = [];
  private readonly bodies = new LazyBodies();
  private readonly memo = new ContextMemo(this.bodies);
  /** where the lines are as read (or as last rewritten); undefined: every rewrite serializes */
  private lines: LineSource | undefined;
  /** where the header's line is in `lines` */
  private headerLine: { line: number; offset: number; length: number } | undefined;
  /** oh-my-pi's title slot before the header (format/title-slot.ts): where it is, and its text as read */
  private titleSlot: { line: number; offset: number; length: number; text: string } | undefined;
  /**
   * entries changed in memory since their line was written: the message then, where the line is,
   * and the line to write instead of serializing the entry, when the change came with one
   */
  private readonly edits = new Map<IndexNode, { message: AgentMessage; offset: number; text?: string }>();
  /** what the entries read so far show of the agent that wrote them (format/dialects/detect.ts) */
  private readonly evidence = new DialectEvidence();

  constructor(entries: Iterable<SessionEntry> = []) {
    for (const entry of entries) this.add(entry);
  }

  /** How many entries context() has turned into messages so far: shows whether it reused the last one. */
  get contextConversions(): number {
    return this.memo.conversions;
  }

  get size(): number {
    return this.nodes.length;
  }

  /** Every entry in file order (bodies still on disk are read first). Do not mutate the array. */
  get entries(): readonly SessionEntry[] {
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
    const node = this.nodes[this.nodes.length - 1];
    return node && this.bodies.entryOf(node);
  }

  /** The newest entry of a type, reading no other body. */
  findLast(type: string): SessionEntry | undefined {
    for (let i = this.nodes.length - 1; i >= 0; i--) if (this.nodes[i].type === type) return this.bodies.entryOf(this.nodes[i]);
    return undefined;
  }

  /** Adds an entry; a later entry with an id already indexed takes that id over. */
  add(entry: SessionEntry): void {
    this.insert(entry, false);
  }

  /** Adds an entry unless its id is indexed (then false, nothing changed), read from `line` at `offset` for `length` bytes (-1: none). For loaders. */
  addIfNew(entry: SessionEntry, line = 0, offset = -1, length = 0): boolean {
    return this.insert(entry, true, line, offset, length);
  }

  private insert(entry: SessionEntry, refuseDuplicate: boolean, line = 0, offset = -1, length = 0): boolean {
    const role = entry.type === "message" ? entry.message?.role : undefined;
    if (!this.link(new IndexNode(entry.id, entry.parentId, entry.type, role, entry, line, offset, length), refuseDuplicate)) return false;
    this.evidence.note(entry.type, role, entry as unknown as Record<string, unknown>);
    this.all?.push(entry);
    if (entry.type === "label") {
      if (entry.label) this.labels.set(entry.targetId, entry.label);
      else this.labels.delete(entry.targetId);
    }
    return true;
  }

  /**
   * Indexes an entry whose body stays in the file, at `offset` for `length` bytes (line `line`);
   * attachBodies() gives the reader that fetches it. For loaders.
   */
  addDeferred(type: string, id: string, parentId: string | null, role: string | undefined, line: number, offset: number, length: number): boolean {
    if (!this.link(new IndexNode(id, parentId, type, role, undefined, line, offset, length), true)) return false;
    this.evidence.note(type, role);
    this.bodies.deferred();
    this.all = undefined;
    return true;
  }

  /** EntrySink.expect: `distinct` ids (none indexed yet) are placed in the table on the first lookup. For loaders. */
  expect(count: number, distinct = false): void {
    this.byId.expect(count, distinct && this.nodes.length === 0);
  }

  /** The reader for the bodies of deferred entries; the index closes it once every body is read. */
  attachBodies(bodies: BodyReader): void {
    this.bodies.attach(bodies);
  }

  /** Where the header's line is. For loaders. */
  headerAt(line: number, offset: number, length: number): void {
    this.headerLine = { line, offset, length };
  }

  /** Where oh-my-pi's title slot is, the line before the header, and its text as read. For loaders. */
  titleSlotAt(line: number, offset: number, length: number, text: string): void {
    this.titleSlot = { line, offset, length, text };
    this.evidence.titleSlot();
  }

  /** The dialect the session is written in, as its lines so far show it. */
  get dialect(): Dialect {
    return DIALECTS[this.evidence.dialect];
  }

  /** Where the lines the entries were read from are, to copy unchanged ones into a rewrite. For loaders. */
  attachLines(lines: LineSource): void {
    this.lines = lines;
  }

  /** Indexes `node`; with `refuseDuplicate`, an id already indexed makes it return false and change nothing. */
  private link(node: IndexNode, refuseDuplicate: boolean): boolean {
    // Most entries hang off the entry written just before them: no lookup needed then.
    const last = this.nodes[this.nodes.length - 1];
    let parent = node.parentId === null ? undefined : last?.id === node.parentId ? last : this.byId.get(node.parentId);
    if (!this.byId.put(node.id, this.nodes.length, !refuseDuplicate)) return false;
    if (parent === node) parent = undefined;
    if (parent) {
      node.parent = parent;
      node.parentId = parent.id; // one string per id, not one per reference
      if (parent.lastChild) parent.lastChild.nextSibling = node;
      else parent.firstChild = node;
      parent.lastChild = node;
      if (parent.rooted) {
        node.rooted = true;
        node.compaction = parent.compaction;
        node.thinking = parent.thinking;
        node.model = parent.model;
      }
    } else {
      node.rooted = node.parentId === null;
      const siblings = this.waiting.get(node.parentId);
      if (siblings) siblings.push(node);
      else this.waiting.set(node.parentId, [node]);
    }
    if (node.type === "compaction") node.compaction = node;
    else if (node.type === "thinking_level_change") node.thinking = node;
    else if (sourcesModel(node)) node.model = node;
    // children that came first (a file with a parent after its child) are adopted now
    const early = this.waiting.size > 1 || !this.waiting.has(null) ? this.waiting.get(node.id) : undefined;
    if (early) {
      this.waiting.delete(node.id);
      for (const child of early) {
        if (node.lastChild) node.lastChild.nextSibling = child;
        else node.firstChild = child;
        node.lastChild = child;
      }
    }
    this.nodes.push(node);
    return true;
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
    const leaf = (leafId ? this.byId.get(leafId) : undefined) ?? this.nodes[this.nodes.length - 1];
    if (!leaf) return EMPTY_CONTEXT();
    const dialect = this.dialect;
    if (!leaf.rooted) return contextFromPath(pathToRoot(this.bodies.entryOf(leaf), (x) => this.get(x), onProblem), dialect);
    // the index tracks the latest thinking level and model per entry; another reading walks the path
    if (!dialect.settingsFromLatest) return contextFromPath(this.branch(leaf.id, onProblem), dialect);
    // no context from the memo: the leaf's model source was replaced by another role's message
    return this.memo.context(leaf, dialect) ?? contextFromPath(this.branch(leaf.id, onProblem), dialect);
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
    let edit = this.edits.get(node);
    if (!edit) {
      // the stored line no longer says what the entry does: a rewrite serializes it (or writes `line`)
      if (message !== entry.message) {
        edit = { message: entry.message, offset: node.offset };
        this.edits.set(node, edit);
        node.offset = -1;
      }
    } else if (message === edit.message) {
      // back to what its line says (a failed rewrite undone): the line is copied again
      node.offset = edit.offset;
      this.edits.delete(node);
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
   * The session as lines for a rewrite of its store: the header, then every entry in file order.
   * A line whose entry is unchanged since it was read is copied from the store byte for byte
   * (docs/ARCHITECTURE.md, storage decisions), so numbers beyond a double, escapes, spacing, key
   * order and keys written twice survive; only new and changed entries are serialized, and the
   * header when `headerChanged`. Bodies still in the file are not read. Throws when the store no
   * longer holds a line where it was read (another program changed it), before anything is written.
   */
  storedLines(header: SessionHeader, headerChanged: boolean): string[] {
    // omp's title slot goes first, copied as the store holds it now: omp may have retitled in place
    const slot = this.titleSlot ? 1 : 0;
    const out = new Array<string>(this.nodes.length + 1 + slot);
    const source = this.lines;
    // without a source (a loader that did not attach one) every line is serialized, as it was read
    if (!source) this.bodies.load(this.nodes);
    const copied: StoredRange[] = [];
    const at: number[] = [];
    if (this.titleSlot) {
      if (source) {
        copied.push({ id: "", titleSlot: true, ...this.titleSlot });
        at.push(0);
      } else out[0] = this.titleSlot.text;
    }
    if (source && this.headerLine && !headerChanged) {
      copied.push({ id: header.id, ...this.headerLine });
      at.push(slot);
    } else out[slot] = JSON.stringify(header);
    for (let i = 0; i < this.nodes.length; i++) {
      const node = this.nodes[i];
      if (source && node.offset >= 0) {
        copied.push(node);
        at.push(i + 1 + slot);
      } else out[i + 1 + slot] = (this.edits.size > 0 ? this.edits.get(node)?.text : undefined) ?? JSON.stringify(node.entry);
    }
    if (copied.length > 0) {
      const texts = source!.texts(copied);
      for (let k = 0; k < texts.length; k++) out[at[k]] = texts[k];
    }
    return out;
  }

  /** The line each entry of `ids` has in the store, when unchanged since read or last rewritten, or given with its change (replaceMessage); else undefined. */
  storedLinesOf(ids: readonly string[]): (string | undefined)[] {
    const out = new Array<string | undefined>(ids.length).fill(undefined);
    const found: IndexNode[] = [];
    const at: number[] = [];
    ids.forEach((id, i) => {
      const node = this.byId.get(id);
      if (node && node.offset >= 0 && this.lines) {
        found.push(node);
        at.push(i);
      } else if (node) out[i] = this.edits.get(node)?.text;
    });
    if (found.length > 0) {
      const texts = this.lines!.texts(found);
      for (let k = 0; k < texts.length; k++) out[at[k]] = texts[k];
    }
    return out;
  }

  /**
   * The store now holds `lines`, what storedLines gave: each line's place in them becomes its
   * entry's, so the next rewrite copies from them too, and no entry counts as changed. Bodies
   * still on disk are read from the new file from now on.
   */
  rewritten(lines: readonly string[]): void {
    const slot = this.titleSlot ? 1 : 0;
    if (lines.length !== this.nodes.length + 1 + slot) throw new Error(`a rewrite of ${lines.length} lines does not match ${this.nodes.length} entries`);
    this.edits.clear();
    if (!this.lines) return;
    this.lines = this.lines.rewritten(lines);
    this.bodies.close(); // its descriptor is on the replaced file; the next read opens the new one
    // each line's place in the new file, in order: the title slot, the header, the entries
    let offset = 0;
    const place = (index: number) => {
      const length = Buffer.byteLength(lines[index], "utf8");
      const at = { line: index + 1, offset, length };
      offset += length + 1;
      return at;
    };
    if (this.titleSlot) this.titleSlot = { ...place(0), text: lines[0] };
    this.headerLine = place(slot);
    for (let i = 0; i < this.nodes.length; i++) Object.assign(this.nodes[i], place(i + 1 + slot));
  }

  /** The forest of entries (see buildForest); every body is read first, in file order. */
  tree(onProblem?: (p: PathProblem) => void): SessionTreeNode[] {
    void this.entries;
    return buildForest(this.nodes, this.byId, this.labels, onProblem);
  }

  /** tree() keeping no body it reads: each entry goes to `visit`, and a message's node holds a stand-in (LazyBodies.visit). */
  outline(visit: (entry: SessionEntry) => void, onProblem?: (p: PathProblem) => void): SessionTreeNode[] {
    const standIns = this.bodies.visit(this.nodes, visit);
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
