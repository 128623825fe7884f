/**
 * The in-memory index of a session's entries: by id, by parent, labels, and file order. Adding
 * an entry is O(1); a branch walk is O(depth); nothing scans the whole session per append.
 *
 * Entries may arrive deferred (their bodies still in the file, see bodies.ts): the index then
 * knows their type, ids and role, and reads a body the first time the entry itself is asked for.
 * Each node also carries the nearest compaction, thinking-level change and model source on its
 * path, worked out when it is added, so the context of a leaf is built from the entries after the
 * latest compaction instead of a walk over the whole path. The last context built is remembered:
 * an agent asks for it every turn after appending an entry or two, and only those are converted.
 */
import type { BodyReader, DeferredBody } from "../storage/bodies.js";
import { compactionSummaryMessageFromEntry, contextFromPath, messageFromEntry, modelFromChange } from "../format/context.js";
import { IdTable } from "./id-table.js";
import { type PathProblem, pathToRoot } from "../format/path.js";
import type { AgentMessage } from "../format/message-types.js";
import type {
  CompactionEntry,
  ModelRef,
  SessionContext,
  SessionEntry,
  SessionTreeNode,
  ThinkingLevelChangeEntry,
} from "../format/entry-types.js";

class IndexNode implements DeferredBody {
  /** the parent, when it was indexed before this entry */
  parent: IndexNode | undefined = undefined;
  /** children in file order, as a list through nextSibling (no array per entry) */
  firstChild: IndexNode | undefined = undefined;
  lastChild: IndexNode | undefined = undefined;
  nextSibling: IndexNode | undefined = undefined;
  /**
   * Every entry up to a root was indexed before this one (so no cycle and no missing parent on
   * the path) and the three summaries below are exact.
   */
  rooted = false;
  compaction: IndexNode | undefined = undefined;
  thinking: IndexNode | undefined = undefined;
  /** the latest assistant message or default-role model change on the path */
  model: IndexNode | undefined = undefined;

  constructor(
    readonly id: string,
    public parentId: string | null,
    readonly type: string,
    /** the message's role; changes only through TreeIndex.replaceMessage */
    public role: string | undefined,
    /** the entry, once read; until then the line it is on */
    public entry: SessionEntry | undefined,
    readonly line: number,
    readonly offset: number,
    readonly length: number,
  ) {}
}

const EMPTY_CONTEXT = (): SessionContext => ({ messages: [], thinkingLevel: "off", model: null });

/**
 * The messages of the last context built, for a rooted leaf. Still exact for any leaf below it
 * with no compaction in between, because a rooted node's path never changes; only a body changed
 * in memory makes it stale (see invalidateContext).
 */
interface RememberedContext {
  leaf: IndexNode;
  /** never handed out: callers get copies, and this one grows as the leaf moves down */
  messages: AgentMessage[];
}

export class TreeIndex {
  private readonly nodes: IndexNode[] = [];
  private readonly byId = new IdTable<IndexNode>(this.nodes);
  /** children whose parent id is null or not (yet) indexed, by that id */
  private readonly waiting = new Map<string | null, IndexNode[]>();
  private readonly labels = new Map<string, string>();
  /** nodes whose bodies have not been read */
  private pending = 0;
  /** every entry in file order; kept only while no body is pending */
  private all: SessionEntry[] | undefined = [];

  /** reads bodies that are still on disk */
  private bodies: BodyReader | undefined;
  /** one context, the last built: one per leaf would keep every path's array alive */
  private remembered: RememberedContext | undefined;
  private converted = 0;

  constructor(entries: Iterable<SessionEntry> = []) {
    for (const entry of entries) this.add(entry);
  }

  /** How many entries context() has turned into messages so far: shows whether it reused the last one. */
  get contextConversions(): number {
    return this.converted;
  }

  get size(): number {
    return this.nodes.length;
  }

  /** Every entry in file order (bodies still on disk are read first). Do not mutate the array. */
  get entries(): readonly SessionEntry[] {
    if (!this.all) {
      this.load(this.nodes);
      this.all = this.nodes.map((n) => n.entry!);
    }
    return this.all;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  get(id: string): SessionEntry | undefined {
    const node = this.byId.get(id);
    return node && this.entryOf(node);
  }

  /** The last entry in file order: the leaf a reader infers from the file. */
  last(): SessionEntry | undefined {
    const node = this.nodes[this.nodes.length - 1];
    return node && this.entryOf(node);
  }

  /** The newest entry of a type, reading no other body. */
  findLast(type: string): SessionEntry | undefined {
    for (let i = this.nodes.length - 1; i >= 0; i--) if (this.nodes[i].type === type) return this.entryOf(this.nodes[i]);
    return undefined;
  }

  /** Adds an entry; a later entry with an id already indexed takes that id over. */
  add(entry: SessionEntry): void {
    this.insert(entry, false);
  }

  /** Adds an entry unless its id is indexed already (then returns false and changes nothing). For loaders. */
  addIfNew(entry: SessionEntry): boolean {
    return this.insert(entry, true);
  }

  private insert(entry: SessionEntry, refuseDuplicate: boolean): boolean {
    const role = entry.type === "message" ? entry.message?.role : undefined;
    if (!this.link(new IndexNode(entry.id, entry.parentId, entry.type, role, entry, 0, -1, 0), refuseDuplicate)) return false;
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
    this.pending++;
    this.all = undefined;
    return true;
  }

  /** The reader for the bodies of deferred entries; the index closes it once every body is read. */
  attachBodies(bodies: BodyReader): void {
    this.bodies = bodies;
    this.releaseBodiesIfDone();
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
    return nodes ? this.load(nodes) : [];
  }

  label(id: string): string | undefined {
    return this.labels.get(id);
  }

  labelCount(): number {
    return this.labels.size;
  }

  /** Root-first path ending at `id` (the entry itself included); empty for an unknown id. */
  branch(id: string | null | undefined, onProblem?: (p: PathProblem) => void): SessionEntry[] {
    if (!id) return [];
    const node = this.byId.get(id);
    if (!node) return [];
    if (!node.rooted) return pathToRoot(this.entryOf(node), (x) => this.get(x), onProblem);
    // A compaction check asks for the branch every turn: one walk to size the array, one to fill
    // it from the leaf end, and a body read only when some entry on it is still on disk.
    let depth = 0;
    for (let n: IndexNode | undefined = node; n; n = n.parent) depth++;
    const path = new Array<SessionEntry>(depth);
    let missing = false;
    let i = depth;
    for (let n: IndexNode | undefined = node; n; n = n.parent) {
      const entry = n.entry;
      if (entry) path[--i] = entry;
      else {
        missing = true;
        break;
      }
    }
    if (!missing) return path;
    const nodes = new Array<IndexNode>(depth);
    i = depth;
    for (let n: IndexNode | undefined = node; n; n = n.parent) nodes[--i] = n;
    return this.load(nodes);
  }

  /** Whether `id` has no parent in this session (null, itself, or missing). */
  isRoot(entry: SessionEntry): boolean {
    return entry.parentId === null || entry.parentId === entry.id || !this.byId.has(entry.parentId);
  }

  /**
   * What the model sees at `leafId` (see context.ts): null is "before the first entry", an
   * unknown id falls back to the last entry. Reads only the path after the latest compaction
   * (and the entries it keeps from before it), and of that only what is below the leaf of the
   * last context built when the new leaf descends from it. Every call returns a new object and a
   * new messages array; the message objects are shared with the session and earlier results, so
   * treat them as read-only and change a message through replaceMessage.
   */
  context(leafId: string | null | undefined, onProblem?: (p: PathProblem) => void): SessionContext {
    if (leafId === null) return EMPTY_CONTEXT();
    const leaf = (leafId ? this.byId.get(leafId) : undefined) ?? this.nodes[this.nodes.length - 1];
    if (!leaf) return EMPTY_CONTEXT();
    if (!leaf.rooted) return contextFromPath(pathToRoot(this.entryOf(leaf), (x) => this.get(x), onProblem));

    const thinking = leaf.thinking && (this.entryOf(leaf.thinking) as ThinkingLevelChangeEntry);
    const modelEntry = leaf.model && this.entryOf(leaf.model);
    let model: ModelRef | null = null;
    if (modelEntry?.type === "model_change") model = modelFromChange(modelEntry) ?? null;
    else if (modelEntry?.type === "message" && modelEntry.message.role === "assistant") {
      model = { provider: modelEntry.message.provider, modelId: modelEntry.message.model };
    } else if (modelEntry) {
      // the entry changed role since it was indexed (it was replaced in memory): walk the path
      return contextFromPath(this.branch(leaf.id, onProblem));
    }
    const thinkingLevel = thinking ? thinking.thinkingLevel : "off";
    const messages = this.messagesOf(leaf);
    this.remembered = { leaf, messages };
    return { messages: messages.slice(), thinkingLevel, model };
  }

  /**
   * Drops the remembered context. Call it whenever an entry's body changes in memory other than
   * through replaceMessage: the remembered messages would still show the old body.
   */
  invalidateContext(): void {
    this.remembered = undefined;
  }

  /**
   * Replaces the message of a message entry in memory (pruning and restoring tool output); the
   * entry keeps its id, parent and place. What the index worked out from the old message follows:
   * the remembered context is dropped, and when the role changes to or from assistant, the model
   * of every entry below is worked out again (a rare, O(subtree) step).
   */
  replaceMessage(id: string, message: AgentMessage): void {
    const node = this.byId.get(id);
    const entry = node && this.entryOf(node);
    if (!node || entry?.type !== "message") throw new Error(`Entry ${id} is not a message entry of this session`);
    entry.message = message;
    this.remembered = undefined;
    if (node.role === message.role) return;
    const wasAssistant = node.role === "assistant";
    node.role = message.role;
    if (node.rooted && (wasAssistant || message.role === "assistant")) relinkModels(node);
  }

  /** The messages at a rooted leaf: the remembered ones extended when the leaf is below them. */
  private messagesOf(leaf: IndexNode): AgentMessage[] {
    const stop = leaf.compaction;
    const last = this.remembered?.leaf;
    // Walking up, the remembered leaf is met before the nearest compaction (or is it) only when
    // both share that compaction, so its messages are a prefix of this leaf's.
    const after: IndexNode[] = [];
    let reached = false;
    for (let n: IndexNode | undefined = leaf; n; n = n.parent) {
      if (n === last) {
        reached = true;
        break;
      }
      if (n === stop) break;
      after.push(n);
    }
    after.reverse();
    if (reached) {
      const messages = this.remembered!.messages;
      this.emit(this.load(after), messages);
      return messages;
    }
    const messages: AgentMessage[] = [];
    if (stop) {
      const compaction = this.entryOf(stop) as CompactionEntry;
      messages.push(compactionSummaryMessageFromEntry(compaction));
      const kept: IndexNode[] = [];
      for (let n = stop.parent; n; n = n.parent) {
        kept.push(n);
        if (n.id === compaction.firstKeptEntryId) {
          this.emit(this.load(kept.reverse()), messages);
          break;
        }
      }
    }
    this.emit(this.load(after), messages);
    return messages;
  }

  private emit(entries: readonly SessionEntry[], messages: AgentMessage[]): void {
    this.converted += entries.length;
    for (const entry of entries) {
      const message = messageFromEntry(entry);
      if (message) messages.push(message);
    }
  }

  /**
   * The forest of entries: roots in file order, children sorted by timestamp (stable, so equal
   * timestamps keep file order), each node with its label. Entries caught in a parent cycle are
   * reachable from no root; each cycle is reported and broken at the entry where the walk up
   * from them repeats, which becomes an extra root, so no entry goes missing from the tree.
   */
  tree(onProblem?: (p: PathProblem) => void): SessionTreeNode[] {
    void this.entries; // read every body once, in file order
    const labels = this.labels;
    const nodeOf = (node: IndexNode): SessionTreeNode => {
      const out: SessionTreeNode = { entry: node.entry!, children: [] };
      if (labels.size > 0) {
        const label = labels.get(node.id);
        if (label !== undefined) out.label = label;
      }
      return out;
    };
    // Every entry sits in exactly one sibling list, so a walk from the roots meets each at most
    // once; only a self-parent lists itself. `placed` is needed only once a cycle shows up.
    // Each children array is made at its final size: an array grown by push keeps room for 16,
    // which at a million entries is most of the tree's memory and of the collector's work.
    let placed: Set<IndexNode> | undefined;
    let reached = 0;
    const grow = (root: IndexNode, out: SessionTreeNode) => {
      placed?.add(root);
      reached++;
      const nodes = [root];
      const outs = [out];
      const visit = (kid: IndexNode): SessionTreeNode => {
        placed?.add(kid);
        reached++;
        const child = nodeOf(kid);
        nodes.push(kid);
        outs.push(child);
        return child;
      };
      while (nodes.length > 0) {
        const node = nodes.pop()!;
        const parentOut = outs.pop()!;
        const first = node.firstChild;
        if (!first) continue;
        // one child is the common case: no list to build or sort
        if (!first.nextSibling) {
          if (first !== node && !placed?.has(first)) parentOut.children = [visit(first)];
          continue;
        }
        let kids = childrenOf(node).filter((c) => c !== node && !placed?.has(c));
        if (kids.length > 1) kids = sortByTime(kids);
        parentOut.children = kids.map(visit);
      }
    };
    const roots: SessionTreeNode[] = [];
    const growFromRoots = () => {
      for (const node of this.nodes) {
        if (!this.isRootNode(node)) continue;
        const out = nodeOf(node);
        roots.push(out);
        grow(node, out);
      }
    };
    growFromRoots();
    if (reached < this.nodes.length) {
      // Some entries sit on a parent cycle, out of reach of every root: walk again, this time
      // keeping what was placed (rare, so the first walk does not pay for the set).
      placed = new Set();
      roots.length = 0;
      growFromRoots();
      for (const node of this.nodes) {
        if (placed.has(node)) continue;
        const cycleNode = this.firstRepeatAbove(node);
        onProblem?.({ kind: "cycle", entryId: cycleNode.id });
        const out = nodeOf(cycleNode);
        roots.push(out);
        grow(cycleNode, out);
      }
    }
    return roots;
  }

  /** Releases the file behind deferred bodies; a later read opens it again. */
  close(): void {
    this.bodies?.close();
    this.remembered = undefined; // a closed session is rarely read again: do not keep its path alive
  }

  private isRootNode(node: IndexNode): boolean {
    return node.parentId === null || node.parentId === node.id || !this.byId.has(node.parentId);
  }

  /** Walks parent links up from an entry that no root reaches until an entry repeats: one on the cycle. */
  private firstRepeatAbove(node: IndexNode): IndexNode {
    const seen = new Set<IndexNode>();
    let current = node;
    while (!seen.has(current)) {
      seen.add(current);
      const parent = current.parentId === null ? undefined : this.byId.get(current.parentId);
      if (!parent) return current; // unreachable for an unplaced entry, kept as a guard
      current = parent;
    }
    return current;
  }

  private entryOf(node: IndexNode): SessionEntry {
    return node.entry ?? this.load([node])[0];
  }

  /** The entries of `nodes`, reading the bodies still on disk in one pass. */
  private load(nodes: readonly IndexNode[]): SessionEntry[] {
    const missing: IndexNode[] = [];
    for (const node of nodes) if (!node.entry) missing.push(node);
    if (missing.length > 0) {
      if (!this.bodies) throw new Error("entries were indexed without their bodies and no reader was attached");
      const read = this.bodies.read(missing);
      for (let i = 0; i < missing.length; i++) missing[i].entry = read[i];
      this.pending -= missing.length;
      this.releaseBodiesIfDone();
    }
    return nodes.map((n) => n.entry!);
  }

  private releaseBodiesIfDone(): void {
    if (this.pending === 0) this.bodies?.close();
  }
}

/** Works out the model source of `top` and every rooted entry below it again, parents first. */
function relinkModels(top: IndexNode): void {
  const stack = [top];
  while (stack.length > 0) {
    const node = stack.pop()!;
    node.model = sourcesModel(node) ? node : node.parent?.model;
    for (let child = node.firstChild; child; child = child.nextSibling) {
      // adopted early children are not rooted and never read these pointers
      if (child.parent === node && child.rooted) stack.push(child);
    }
  }
}

/** Whether an entry sets the model for the entries below it (see link). */
function sourcesModel(node: IndexNode): boolean {
  if (node.role === "assistant") return true;
  return node.type === "model_change" && modelFromChange(node.entry as Parameters<typeof modelFromChange>[0]) !== undefined;
}

function childrenOf(node: IndexNode): IndexNode[] {
  const out: IndexNode[] = [];
  for (let child = node.firstChild; child; child = child.nextSibling) out.push(child);
  return out;
}

function sortByTime(nodes: readonly IndexNode[]): IndexNode[] {
  return nodes
    .map((node, order) => ({ node, order, time: Date.parse(node.entry!.timestamp) }))
    .sort((a, b) => a.time - b.time || a.order - b.order || 0)
    .map((x) => x.node);
}

/** Depth-first, pre-order walk of a forest. */
export function flattenTree(roots: readonly SessionTreeNode[]): { node: SessionTreeNode; depth: number }[] {
  const out: { node: SessionTreeNode; depth: number }[] = [];
  const stack: { node: SessionTreeNode; depth: number }[] = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push({ node: roots[i], depth: 0 });
  while (stack.length > 0) {
    const item = stack.pop()!;
    out.push(item);
    const kids = item.node.children;
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ node: kids[i], depth: item.depth + 1 });
  }
  return out;
}
