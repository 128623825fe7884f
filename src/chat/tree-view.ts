/**
 * The rows of the `/tree` selector: the session tree flattened depth first, indented only where
 * the conversation forks (a long linear session stays flat), with labels, summaries and the
 * current leaf marked. Bookkeeping entries (bonsai.checkout markers, label changes) are left
 * out; their children take their place. Pure: tree in, rows out.
 */
import { clip, entryPreview } from "../messages/preview.js";
import { untrusted } from "../util/terminal-safe.js";
import { assistantText, toolCallLine, withoutBranchPreamble } from "./transcript.js";
import { withoutHidden } from "../format/tree-nodes.js";
import { isCheckoutMarker, type SessionEntry, type SessionTreeNode } from "../format/entry-types.js";

export interface TreeRow {
  id: string;
  /** forks above this row: 0 for the trunk */
  depth: number;
  /** the connector drawn before the row ("├─ ", "│  └─ ", …) */
  prefix: string;
  /** message role or entry kind: user, assistant, toolResult, compaction, branch summary, … */
  kind: string;
  /** one-line preview of the entry */
  text: string;
  label?: string;
  summary?: "compaction" | "branch";
  /** the entry the conversation currently continues from */
  isLeaf: boolean;
  /** on the path from the root to the current leaf */
  onPath: boolean;
}

export interface TreeView {
  rows: TreeRow[];
  /** the row of the current leaf (or its nearest shown ancestor); -1 when there are no rows */
  leafIndex: number;
}

/** Entries that only record something about other entries: not places to move to. */
export function isBookkeeping(entry: SessionEntry): boolean {
  return entry.type === "label" || isCheckoutMarker(entry);
}

const shownChildren = (nodes: readonly SessionTreeNode[]) => withoutHidden(nodes, isBookkeeping);

/** The leaf itself, or its closest ancestor that is shown (a label change can be the leaf). */
function shownLeaf(roots: readonly SessionTreeNode[], leafId: string | null): string | null {
  if (leafId === null) return null;
  const byId = new Map<string, SessionEntry>();
  const stack = [...roots];
  while (stack.length > 0) {
    const node = stack.pop()!;
    byId.set(node.entry.id, node.entry);
    for (const child of node.children) stack.push(child);
  }
  let entry = byId.get(leafId);
  const seen = new Set<string>();
  while (entry && isBookkeeping(entry) && !seen.has(entry.id)) {
    seen.add(entry.id);
    entry = entry.parentId === null ? undefined : byId.get(entry.parentId);
  }
  return entry?.id ?? null;
}

function describe(entry: SessionEntry): { kind: string; text: string; summary?: "compaction" | "branch" } {
  const preview = entryPreview(entry);
  if (preview.summary === "compaction") return { kind: "compaction", text: preview.text, summary: "compaction" };
  if (entry.type === "message" && entry.message.role === "assistant") {
    const message = entry.message;
    const calls = message.content.flatMap((b) => (b.type === "toolCall" ? [`→ ${toolCallLine(b.name, b.arguments)}`] : []));
    const text = [assistantText(message), ...calls].filter(Boolean).join(" ");
    if (text) return { kind: "assistant", text };
  }
  if (entry.type === "branch_summary") return { kind: "branch summary", text: withoutBranchPreamble(entry.summary), summary: "branch" };
  return { kind: preview.kind, text: preview.text };
}

/**
 * Flattens the tree. `activePath` holds the ids from the root to the leaf (getBranch()); rows
 * of forks are ordered as the tree gives them (oldest first). Iterative: any depth works.
 */
export function buildTreeView(roots: readonly SessionTreeNode[], leafId: string | null, activePath: ReadonlySet<string>): TreeView {
  const marked = shownLeaf(roots, leafId);
  const rows: TreeRow[] = [];
  type Item = { node: SessionTreeNode; depth: number; prefix: string; connector: "" | "├─ " | "└─ " };
  const stack: Item[] = [];
  const pushSiblings = (nodes: SessionTreeNode[], depth: number, prefix: string) => {
    if (nodes.length === 1) stack.push({ node: nodes[0], depth, prefix, connector: "" });
    else {
      for (let i = nodes.length - 1; i >= 0; i--) {
        stack.push({ node: nodes[i], depth: depth + 1, prefix, connector: i === nodes.length - 1 ? "└─ " : "├─ " });
      }
    }
  };
  pushSiblings(shownChildren(roots), 0, "");
  let leafIndex = -1;
  while (stack.length > 0) {
    const { node, depth, prefix, connector } = stack.pop()!;
    const { entry } = node;
    const isLeaf = entry.id === marked;
    if (isLeaf) leafIndex = rows.length;
    rows.push({
      id: entry.id,
      depth,
      prefix: prefix + connector,
      ...describe(entry),
      ...(node.label !== undefined ? { label: node.label } : {}),
      isLeaf,
      onPath: activePath.has(entry.id),
    });
    const childPrefix = prefix + (connector === "├─ " ? "│  " : connector === "└─ " ? "   " : "");
    pushSiblings(shownChildren(node.children), depth, childPrefix);
  }
  return { rows, leafIndex };
}

/** How the parts of a row are drawn; plain text by default (tests, `--json`-like uses). */
export interface RowPaint {
  body(text: string, row: TreeRow): string;
  label(text: string): string;
  leaf(text: string): string;
}

const PLAIN: RowPaint = { body: (t) => t, label: (t) => t, leaf: (t) => t };

/** A row: connector, kind, preview clipped so the whole row fits `width`, label, leaf marker. */
export function formatTreeRow(row: TreeRow, width = 100, paint: RowPaint = PLAIN): string {
  // the kind, the text and the label come from the session: nothing in them may drive the terminal
  const label = row.label !== undefined ? ` [${untrusted(row.label)}]` : "";
  const leaf = row.isLeaf ? " ← current" : "";
  const head = `${row.prefix}${untrusted(row.kind)}: `;
  const room = Math.max(8, width - head.length - label.length - leaf.length);
  return `${paint.body(`${head}${clip(untrusted(row.text), room)}`, row)}${label ? paint.label(label) : ""}${leaf ? paint.leaf(leaf) : ""}`;
}
