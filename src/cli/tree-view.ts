/**
 * How `bonsai tree` draws entries: one line each (id, role or type, a preview, the label, the
 * leaf), forks indented with box-drawing connectors, and the narrower views its flags ask for:
 * the active path only, labeled entries only, a subtree, a depth limit.
 */
import { isCheckoutMarker, type SessionTreeNode } from "../format/entry-types.js";
import { withoutHidden } from "../format/tree-nodes.js";
import { clip, type EntryPreview, entryPreview, previewReach } from "../messages/preview.js";
import type { Colors } from "./output.js";

export interface RenderOptions {
  leafId: string | null;
  /** previews made beforehand and clipped to the width, by entry id (a tree from getOutline, whose message entries are stand-ins) */
  previews?: ReadonlyMap<string, EntryPreview>;
  /** ids on the path to the leaf, highlighted */
  activePath: ReadonlySet<string>;
  showAll?: boolean;
  previewWidth?: number;
  /** at most this many entries down from the roots; the rest is counted on one line */
  depth?: number;
}

/** Columns of an entry's preview in a tree line, unless `previewWidth` says otherwise. */
export const TREE_PREVIEW_WIDTH = 60;

/** What the markers of the tree mean, printed under it (within 80 columns). */
export const TREE_LEGEND = "legend: ← leaf: the session continues there · [label] · ├─ └─ a fork";

/** Children with checkout markers replaced by their own (visible) children. */
export function visibleChildren(nodes: readonly SessionTreeNode[], showAll: boolean): SessionTreeNode[] {
  return showAll ? [...nodes] : withoutHidden(nodes, isCheckoutMarker);
}

/** How many entries are in the subtrees of `nodes` (themselves included). */
function countBelow(nodes: readonly SessionTreeNode[], showAll: boolean): number {
  let count = 0;
  const stack = [...visibleChildren(nodes, showAll)];
  while (stack.length > 0) {
    const node = stack.pop()!;
    count++;
    stack.push(...visibleChildren(node.children, showAll));
  }
  return count;
}

/**
 * One line per entry. A chain of single children stays at the same indentation; only a fork
 * indents, so a 10,000-entry linear session stays readable. Iterative, so depth is not limited
 * by the call stack.
 */
export function renderTree(roots: readonly SessionTreeNode[], c: Colors, options: RenderOptions): string[] {
  const width = options.previewWidth ?? TREE_PREVIEW_WIDTH;
  const showAll = options.showAll ?? false;
  const maxDepth = options.depth ?? Number.POSITIVE_INFINITY;
  const lines: string[] = [];
  type Item = { node: SessionTreeNode; prefix: string; connector: "" | "├─ " | "└─ "; depth: number };
  const stack: Item[] = [];
  const pushSiblings = (nodes: SessionTreeNode[], prefix: string, depth: number) => {
    if (nodes.length === 1) stack.push({ node: nodes[0], prefix, connector: "", depth });
    else for (let i = nodes.length - 1; i >= 0; i--) stack.push({ node: nodes[i], prefix, connector: i === nodes.length - 1 ? "└─ " : "├─ ", depth });
  };
  pushSiblings(visibleChildren(roots, showAll), "", 1);
  while (stack.length > 0) {
    const { node, prefix, connector, depth } = stack.pop()!;
    lines.push(prefix + c.dim(connector) + describeNode(node, c, options, width));
    const childPrefix = prefix + (connector === "├─ " ? c.dim("│  ") : connector === "└─ " ? "   " : "");
    const children = visibleChildren(node.children, showAll);
    if (depth >= maxDepth) {
      const below = countBelow(children, showAll);
      if (below > 0) lines.push(childPrefix + c.dim(`… ${below} more ${below === 1 ? "entry" : "entries"} below (--depth)`));
      continue;
    }
    pushSiblings(children, childPrefix, depth + 1);
  }
  return lines;
}

/** Lines for a list of nodes without connectors (the active path, the labeled entries). */
export function renderFlat(nodes: readonly SessionTreeNode[], c: Colors, options: RenderOptions): string[] {
  return nodes.map((node) => describeNode(node, c, options, options.previewWidth ?? TREE_PREVIEW_WIDTH));
}

/** Every node, depth first, in the tree's order. */
export function allNodes(roots: readonly SessionTreeNode[]): SessionTreeNode[] {
  const out: SessionTreeNode[] = [];
  const stack = [...roots].reverse();
  while (stack.length > 0) {
    const node = stack.pop()!;
    out.push(node);
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
  }
  return out;
}

export function describeNode(node: SessionTreeNode, c: Colors, options: RenderOptions, width: number): string {
  const { entry } = node;
  const made = options.previews?.get(entry.id);
  const preview = made ?? entryPreview(entry, previewReach(width));
  const onPath = options.activePath.has(entry.id);
  const id = onPath ? c.green(entry.id) : c.dim(entry.id);
  let head: string;
  if (preview.summary === "compaction") head = c.magenta(c.bold("COMPACTION"));
  else if (preview.summary === "branch") head = c.blue(c.bold("BRANCH SUMMARY"));
  else if (entry.type === "message") head = roleColor(preview.kind, c)(preview.kind);
  else head = c.dim(preview.kind);
  const text = preview.text ? ` ${made ? preview.text : clip(preview.text, width)}` : "";
  const label = node.label !== undefined ? ` ${c.cyan(c.bold(`[${node.label}]`))}` : "";
  const leaf = entry.id === options.leafId ? ` ${c.yellow(c.bold("← leaf"))}` : "";
  return `${id} ${head}${onPath ? text : c.dim(text)}${label}${leaf}`;
}

function roleColor(role: string, c: Colors): (s: string) => string {
  switch (role) {
    case "user":
      return (s) => c.bold(c.green(s));
    case "assistant":
      return c.bold;
    case "toolResult":
      return c.dim;
    default:
      return c.yellow;
  }
}
