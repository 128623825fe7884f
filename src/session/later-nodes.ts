/**
 * A replayed open index whose entries are not linked yet (tree.ts, TreeIndex.defer): a session
 * opened to build one context needs the nodes of its leaf's context and of the entries that set
 * its thinking level and model, not 50,000 of them. Those few are made here, found by walking the
 * parents in the index's columns; the index links every entry, reusing them, as soon as anything
 * else is asked for. The rule they are found by is the one TreeIndex.link applies, so the context
 * is the one a full link gives (test/session/later-nodes.test.ts holds them to each other).
 */
import type { CallTable } from "../storage/load-types.js";
import { DEFERRED, ENTRY, kindOf, roleOf, typeOf } from "../storage/open-index.js";
import type { CompactionEntry, SessionEntry } from "../format/entry-types.js";
import { entryNode, IndexNode, roleOfEntry, setsModel } from "./index-node.js";

/** What a walk up the columns cannot follow: the index then links every entry instead. */
const UNKNOWN = -2;

export class LaterNodes {
  /** the parsed entry of each ENTRY call (compactions, labels, model changes…), by call */
  private readonly parsed = new Map<number, SessionEntry>();
  /** calls of parsed entries by id: a deferred entry under one names it by a parent id of its own */
  private readonly parsedById = new Map<string, number>();
  /** the nodes made so far, by call; the index links these very objects */
  private readonly made = new Map<number, IndexNode>();
  /** the entries' calls (not the header's or the title slot's), and the last one */
  readonly count: number;
  private readonly lastCall: number;
  /** calls of deferred entries: bodies still in the file */
  readonly deferred: number;
  /** the distinct packed fields of the deferred calls: their types and roles */
  private readonly deferredKinds = new Set<number>();

  constructor(
    private readonly calls: CallTable,
    entries: readonly SessionEntry[],
  ) {
    let next = 0;
    let count = 0;
    let deferred = 0;
    let last = -1;
    for (let call = 0; call < calls.count; call++) {
      const packed = calls.packed(call);
      const kind = kindOf(packed);
      if (kind === DEFERRED) {
        deferred++;
        this.deferredKinds.add(packed);
      } else if (kind === ENTRY) {
        const entry = entries[next++];
        this.parsed.set(call, entry);
        this.parsedById.set(entry.id, call);
      } else continue;
      count++;
      last = call;
    }
    this.count = count;
    this.deferred = deferred;
    this.lastCall = last;
  }

  /** The distinct types and roles of the deferred entries, and the parsed entries: what a dialect is told from. */
  evidence(note: (type: string, role: string | undefined, fields?: Record<string, unknown>) => void): void {
    for (const packed of this.deferredKinds) note(typeOf(packed, this.calls.names)!, roleOf(packed, this.calls.names) ?? undefined);
    for (const entry of this.parsed.values()) note(entry.type, roleOfEntry(entry), entry as unknown as Record<string, unknown>);
  }

  /** The id of the last entry: the leaf a reader infers, before any is linked. */
  lastId(): string | undefined {
    return this.lastCall < 0 ? undefined : this.idOf(this.lastCall);
  }

  /** The newest parsed entry of `type`, null for none; undefined when deferred entries may be of that type. */
  lastParsed(type: string): SessionEntry | null | undefined {
    for (const packed of this.deferredKinds) if (typeOf(packed, this.calls.names) === type) return undefined;
    let found: SessionEntry | null = null;
    for (const entry of this.parsed.values()) if (entry.type === type) found = entry;
    return found;
  }

  /** The last entry's node. */
  last(): IndexNode | undefined {
    return this.lastCall < 0 ? undefined : this.node(this.lastCall);
  }

  /**
   * The last entry's node with what a context needs (context-memo.ts): its path up to where its
   * context starts as parent links, and its nearest compaction, thinking level change and model
   * source. Undefined when that cannot be told from the columns (a parent on the path that comes
   * later or is missing, a compaction whose first kept entry is not above it): the index links
   * everything.
   */
  contextLeaf(): IndexNode | undefined {
    if (this.lastCall < 0) return undefined;
    const chain: number[] = [];
    let compaction = -1;
    let thinking = -1;
    let model = -1;
    // up from the leaf to a root: the three may be set anywhere above, and only a path that ends
    // at a root is one a link would call rooted (else the reader walks it, and warns of its problem)
    for (let call = this.lastCall; call !== -1; call = this.parentOf(call)) {
      if (call === UNKNOWN) return undefined;
      if (compaction < 0) chain.push(call);
      const type = this.typeAt(call);
      if (type === "compaction") compaction = compaction < 0 ? call : compaction;
      else if (type === "thinking_level_change") thinking = thinking < 0 ? call : thinking;
      else if (model < 0 && this.setsModel(call)) model = call;
    }
    if (compaction >= 0) {
      // on up to the entry the compaction keeps first, which must be above it (else the rule reads the whole path)
      const keptId = (this.parsed.get(compaction) as CompactionEntry).firstKeptEntryId;
      let call = this.parentOf(compaction);
      for (; call >= 0 && this.idOf(call) !== keptId; call = this.parentOf(call)) chain.push(call);
      if (call < 0) return undefined;
      chain.push(call);
    }
    const nodes = chain.map((call) => this.node(call));
    for (let i = 0; i + 1 < nodes.length; i++) nodes[i].parent = nodes[i + 1];
    const leaf = nodes[0];
    leaf.rooted = true;
    leaf.compaction = compaction >= 0 ? this.node(compaction) : undefined;
    leaf.thinking = thinking >= 0 ? this.node(thinking) : undefined;
    leaf.model = model >= 0 ? this.node(model) : undefined;
    return leaf;
  }

  /** Root-first nodes of the last entry's path, for a context rule that reads all of it; undefined as for contextLeaf. */
  lastPath(): IndexNode[] | undefined {
    const path: IndexNode[] = [];
    for (let call = this.lastCall; call !== -1; call = this.parentOf(call)) {
      if (call === UNKNOWN) return undefined;
      path.push(this.node(call));
    }
    return path.reverse();
  }

  /**
   * Hands every entry's node to `link` in file order, with its parsed entry (undefined for a
   * deferred one): the nodes made here are handed over as they are, unlinked again.
   */
  drain(link: (node: IndexNode, parsed: SessionEntry | undefined) => void): void {
    for (let call = 0; call < this.calls.count; call++) {
      const kind = kindOf(this.calls.packed(call));
      if (kind !== DEFERRED && kind !== ENTRY) continue;
      const made = this.made.get(call);
      if (made) unlink(made);
      link(made ?? this.newNode(call), this.parsed.get(call));
    }
  }

  private node(call: number): IndexNode {
    let node = this.made.get(call);
    if (!node) {
      node = this.newNode(call);
      this.made.set(call, node);
    }
    return node;
  }

  private newNode(call: number): IndexNode {
    const { calls } = this;
    const entry = this.parsed.get(call);
    if (entry) return entryNode(entry, calls.line(call), calls.offset(call), calls.length(call));
    const packed = calls.packed(call);
    const parent = calls.parent(call);
    const parentId = parent < 0 ? null : calls.idAt(parent);
    const role = roleOf(packed, calls.names) ?? undefined;
    return new IndexNode(calls.idAt(call), parentId, typeOf(packed, calls.names)!, role, undefined, calls.line(call), calls.offset(call), calls.length(call));
  }

  private isParsed(call: number): boolean {
    return kindOf(this.calls.packed(call)) !== DEFERRED;
  }

  private typeAt(call: number): string {
    return this.isParsed(call) ? this.parsed.get(call)!.type : typeOf(this.calls.packed(call), this.calls.names)!;
  }

  private idOf(call: number): string {
    return this.isParsed(call) ? this.parsed.get(call)!.id : this.calls.idAt(call);
  }

  /** Whether the entry sets the model below it, as TreeIndex.link tells (sourcesModel). */
  private setsModel(call: number): boolean {
    const entry = this.isParsed(call) ? this.parsed.get(call)! : undefined;
    if (!entry) return setsModel(this.typeAt(call), roleOf(this.calls.packed(call), this.calls.names) ?? undefined, undefined);
    return setsModel(entry.type, roleOfEntry(entry), entry);
  }

  /** The call of the entry's parent, an earlier one: -1 for a root, UNKNOWN for anything else. */
  private parentOf(call: number): number {
    const entry = this.isParsed(call) ? this.parsed.get(call)! : undefined;
    let at: number;
    if (entry) {
      if (entry.parentId === null) return -1;
      at = this.parsedById.get(entry.parentId) ?? this.deferredCallOf(entry.parentId, call);
    } else {
      const parent = this.calls.parent(call);
      if (parent < 0) return -1;
      at = parent < this.calls.count ? parent : (this.parsedById.get(this.calls.idAt(parent)) ?? UNKNOWN);
    }
    return at >= 0 && at < call ? at : UNKNOWN;
  }

  /**
   * The deferred call before `before` with `id`, nearest first: the columns keep a parsed entry's
   * parent only as its id, and most hang off the entry just before them (a move on the tree, a
   * branch summary, hangs further up: a scan of ids, once per such entry on the path).
   */
  private deferredCallOf(id: string, before: number): number {
    for (let call = before - 1; call >= 0; call--) {
      if (kindOf(this.calls.packed(call)) === DEFERRED && this.calls.idAt(call) === id) return call;
    }
    return UNKNOWN;
  }
}

/** A node as it was made, before any link: how TreeIndex.link expects a new one. */
function unlink(node: IndexNode): void {
  node.parent = undefined;
  node.rooted = false;
  node.compaction = undefined;
  node.thinking = undefined;
  node.model = undefined;
}
