/**
 * One entry in the session index (tree.ts): its place in the tree as object links, and what the
 * path above it holds, worked out once when it is linked so no read walks the whole path. A node
 * doubles as the DeferredBody the body reader needs while its entry is still in the file.
 */
import type { DeferredBody } from "../storage/bodies.js";
import { modelFromChange } from "../format/context.js";
import type { SessionEntry } from "../format/entry-types.js";

export class IndexNode implements DeferredBody {
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
    /**
     * Where the entry's line is in the store, as read (or as last rewritten): a body still in the
     * file is read from there, and a rewrite copies the line from there while the entry is
     * unchanged. Offset -1: no such line (a new entry, or one changed in memory; see TreeIndex).
     */
    public line: number,
    public offset: number,
    public length: number,
  ) {}
}

/** Works out the model source of `top` and every rooted entry below it again, parents first. */
export function relinkModels(top: IndexNode): void {
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

/** Whether an entry sets the model for the entries below it (see TreeIndex.link). */
export function sourcesModel(node: IndexNode): boolean {
  return setsModel(node.type, node.role, node.entry);
}

/** sourcesModel of an entry by its type, role and (for a model change, which is always parsed) the entry. */
export function setsModel(type: string, role: string | undefined, entry: SessionEntry | undefined): boolean {
  if (role === "assistant") return true;
  return type === "model_change" && modelFromChange(entry as Parameters<typeof modelFromChange>[0]) !== undefined;
}

/** A message's role; undefined for the other entries. */
export const roleOfEntry = (entry: SessionEntry): string | undefined => (entry.type === "message" ? entry.message?.role : undefined);

/** A node for a parsed entry, read from `line` at `offset` for `length` bytes (-1: no such line). */
export const entryNode = (entry: SessionEntry, line = 0, offset = -1, length = 0): IndexNode =>
  new IndexNode(entry.id, entry.parentId, entry.type, roleOfEntry(entry), entry, line, offset, length);

export function childrenOf(node: IndexNode): IndexNode[] {
  const out: IndexNode[] = [];
  for (let child = node.firstChild; child; child = child.nextSibling) out.push(child);
  return out;
}

/**
 * Where the context of an entry below `compaction` starts on its path: the first entry the
 * compaction keeps, or the compaction itself when that entry is not above it (the rule of
 * compactionSegments in format/dialects/pi.ts, which every dialect's context starts from).
 */
export function contextStart(compaction: IndexNode): IndexNode {
  const keptId = (compaction.entry as { firstKeptEntryId?: unknown } | undefined)?.firstKeptEntryId;
  for (let n = compaction.parent; n; n = n.parent) if (n.id === keptId) return n;
  return compaction;
}

/**
 * The step of a walk up from `from` towards the root: each node's parent, or, for `toContext`,
 * none past where the context of `from` starts (contextStart of its latest compaction).
 */
export function stepUp(from: IndexNode, toContext: boolean): (node: IndexNode) => IndexNode | undefined {
  const top = toContext && from.compaction ? contextStart(from.compaction) : undefined;
  return (node) => (node === top ? undefined : node.parent);
}

/** Root-first ids of the path ending at a rooted `node` (what TreeIndex.branch returns, as ids). */
export function pathIds(node: IndexNode): string[] {
  const ids: string[] = [];
  const up = stepUp(node, false);
  for (let n: IndexNode | undefined = node; n; n = up(n)) ids.push(n.id);
  return ids.reverse();
}
