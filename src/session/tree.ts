/**
 * The in-memory index of a session's entries: by id, by parent, labels, and file order. Adding
 * an entry is O(1); a branch walk is O(depth); nothing scans the whole session per append.
 */
import { type PathProblem, pathToRoot } from "./path.js";
import type { SessionEntry, SessionTreeNode } from "./types.js";

export class TreeIndex {
  /** entries in file order */
  readonly entries: SessionEntry[] = [];
  readonly byId = new Map<string, SessionEntry>();
  private readonly childrenById = new Map<string | null, SessionEntry[]>();
  private readonly labels = new Map<string, string>();

  constructor(entries: Iterable<SessionEntry> = []) {
    for (const entry of entries) this.add(entry);
  }

  get size(): number {
    return this.entries.length;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  get(id: string): SessionEntry | undefined {
    return this.byId.get(id);
  }

  /** The last entry in file order: the leaf a reader infers from the file. */
  last(): SessionEntry | undefined {
    return this.entries[this.entries.length - 1];
  }

  add(entry: SessionEntry): void {
    this.entries.push(entry);
    this.byId.set(entry.id, entry);
    const siblings = this.childrenById.get(entry.parentId);
    if (siblings) siblings.push(entry);
    else this.childrenById.set(entry.parentId, [entry]);
    if (entry.type === "label") {
      if (entry.label) this.labels.set(entry.targetId, entry.label);
      else this.labels.delete(entry.targetId);
    }
  }

  children(id: string | null): readonly SessionEntry[] {
    return this.childrenById.get(id) ?? [];
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
    return pathToRoot(this.byId.get(id), (x) => this.byId.get(x), onProblem);
  }

  /** Whether `id` has no parent in this session (null, itself, or missing). */
  isRoot(entry: SessionEntry): boolean {
    return entry.parentId === null || entry.parentId === entry.id || !this.byId.has(entry.parentId);
  }

  /**
   * The forest of entries: roots in file order, children sorted by timestamp (stable, so equal
   * timestamps keep file order), each node with its label. Entries caught in a parent cycle are
   * reachable from no root; each cycle is reported and broken at the entry where the walk up
   * from them repeats, which becomes an extra root, so no entry goes missing from the tree.
   */
  tree(onProblem?: (p: PathProblem) => void): SessionTreeNode[] {
    const nodeOf = (entry: SessionEntry): SessionTreeNode => {
      const node: SessionTreeNode = { entry, children: [] };
      const label = this.labels.get(entry.id);
      if (label !== undefined) node.label = label;
      return node;
    };
    const placed = new Set<string>();
    const grow = (root: SessionTreeNode) => {
      placed.add(root.entry.id);
      const stack = [root];
      while (stack.length > 0) {
        const node = stack.pop()!;
        // `placed` also drops a self-parent from its own children
        const kids = (this.childrenById.get(node.entry.id) ?? []).filter((c) => !placed.has(c.id));
        node.children = sortByTime(kids).map(nodeOf);
        for (const child of node.children) placed.add(child.entry.id);
        stack.push(...node.children);
      }
    };
    const roots = this.entries.filter((e) => this.isRoot(e)).map(nodeOf);
    for (const root of roots) grow(root);
    if (placed.size < this.byId.size) {
      for (const entry of this.entries) {
        if (placed.has(entry.id)) continue;
        const cycleEntry = this.firstRepeatAbove(entry);
        onProblem?.({ kind: "cycle", entryId: cycleEntry.id });
        const root = nodeOf(cycleEntry);
        roots.push(root);
        grow(root);
      }
    }
    return roots;
  }

  /** Walks parent links up from an entry that no root reaches until an entry repeats: one on the cycle. */
  private firstRepeatAbove(entry: SessionEntry): SessionEntry {
    const seen = new Set<string>();
    let current = entry;
    while (!seen.has(current.id)) {
      seen.add(current.id);
      const parent = current.parentId === null ? undefined : this.byId.get(current.parentId);
      if (!parent) return current; // unreachable for an unplaced entry, kept as a guard
      current = parent;
    }
    return current;
  }
}

function sortByTime(entries: readonly SessionEntry[]): SessionEntry[] {
  return entries
    .map((entry, order) => ({ entry, order, time: Date.parse(entry.timestamp) }))
    .sort((a, b) => (a.time - b.time || a.order - b.order) || 0)
    .map((x) => x.entry);
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
