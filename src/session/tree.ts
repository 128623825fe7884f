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
   * timestamps keep file order), each node with its label.
   */
  tree(): SessionTreeNode[] {
    const nodeOf = (entry: SessionEntry): SessionTreeNode => {
      const node: SessionTreeNode = { entry, children: [] };
      const label = this.labels.get(entry.id);
      if (label !== undefined) node.label = label;
      return node;
    };
    const roots = this.entries.filter((e) => this.isRoot(e)).map(nodeOf);
    const stack = [...roots];
    while (stack.length > 0) {
      const node = stack.pop()!;
      const kids = (this.childrenById.get(node.entry.id) ?? []).filter((c) => c.parentId !== c.id);
      node.children = sortByTime(kids).map(nodeOf);
      stack.push(...node.children);
    }
    return roots;
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
