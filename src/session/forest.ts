/**
 * The session as a forest of SessionTreeNodes, built from the index's nodes (TreeIndex.tree), and
 * the depth-first walk over one.
 */
import type { PathProblem } from "../format/path.js";
import type { SessionEntry, SessionTreeNode } from "../format/entry-types.js";
import type { IdTable } from "./id-table.js";
import { childrenOf, type IndexNode } from "./index-node.js";

/**
 * The forest of `nodes` (every body read): roots in file order, children sorted by timestamp
 * (stable, so equal timestamps keep file order), each node with its label. Entries caught in a
 * parent cycle are reachable from no root; each cycle is reported and broken at the entry where
 * the walk up from them repeats, which becomes an extra root, so no entry goes missing from the tree.
 */
export function buildForest(
  nodes: readonly IndexNode[],
  byId: IdTable<IndexNode>,
  labels: ReadonlyMap<string, string>,
  onProblem?: (p: PathProblem) => void,
  /** the entry a node shows (its body, or a stand-in: TreeIndex.outline) */
  entryOf: (node: IndexNode) => SessionEntry = (node) => node.entry!,
): SessionTreeNode[] {
  const nodeOf = (node: IndexNode): SessionTreeNode => {
    const out: SessionTreeNode = { entry: entryOf(node), children: [] };
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
    const stack = [root];
    const outs = [out];
    const visit = (kid: IndexNode): SessionTreeNode => {
      placed?.add(kid);
      reached++;
      const child = nodeOf(kid);
      stack.push(kid);
      outs.push(child);
      return child;
    };
    while (stack.length > 0) {
      const node = stack.pop()!;
      const parentOut = outs.pop()!;
      const first = node.firstChild;
      if (!first) continue;
      // one child is the common case: no list to build or sort
      if (!first.nextSibling) {
        if (first !== node && !placed?.has(first)) parentOut.children = [visit(first)];
        continue;
      }
      let kids = childrenOf(node).filter((c) => c !== node && !placed?.has(c));
      if (kids.length > 1) kids = sortByTime(kids, entryOf);
      parentOut.children = kids.map(visit);
    }
  };
  const isRoot = (node: IndexNode) => node.parentId === null || node.parentId === node.id || !byId.has(node.parentId);
  const roots: SessionTreeNode[] = [];
  const growFromRoots = () => {
    for (const node of nodes) {
      if (!isRoot(node)) continue;
      const out = nodeOf(node);
      roots.push(out);
      grow(node, out);
    }
  };
  growFromRoots();
  if (reached < nodes.length) {
    // Some entries sit on a parent cycle, out of reach of every root: walk again, this time
    // keeping what was placed (rare, so the first walk does not pay for the set).
    placed = new Set();
    roots.length = 0;
    growFromRoots();
    for (const node of nodes) {
      if (placed.has(node)) continue;
      const cycleNode = firstRepeatAbove(node, byId);
      onProblem?.({ kind: "cycle", entryId: cycleNode.id });
      const out = nodeOf(cycleNode);
      roots.push(out);
      grow(cycleNode, out);
    }
  }
  return roots;
}

/** Walks parent links up from an entry that no root reaches until an entry repeats: one on the cycle. */
function firstRepeatAbove(node: IndexNode, byId: IdTable<IndexNode>): IndexNode {
  const seen = new Set<IndexNode>();
  let current = node;
  while (!seen.has(current)) {
    seen.add(current);
    const parent = current.parentId === null ? undefined : byId.get(current.parentId);
    if (!parent) return current; // unreachable for an unplaced entry, kept as a guard
    current = parent;
  }
  return current;
}

function sortByTime(nodes: readonly IndexNode[], entryOf: (node: IndexNode) => SessionEntry): IndexNode[] {
  return nodes
    .map((node, order) => ({ node, order, time: Date.parse(entryOf(node).timestamp) }))
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
