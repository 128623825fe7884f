/**
 * `bonsai tree --json`: every entry, depth first, children in the order the reference sorts them
 * (by time), with what a reader needs to show a node without opening the file again: its
 * message role, timestamp and a one-line preview (docs/json.md).
 */
import type { SessionTreeNode } from "../format/entry-types.js";
import { clip, entryPreview, previewReach } from "../messages/preview.js";
import type { SessionManager } from "../session/manager.js";
import { flattenTree } from "../session/tree.js";

export interface TreeJsonNode {
  id: string;
  parentId: string | null;
  type: string;
  /** the message's role for a message entry, else null */
  role: string | null;
  timestamp: string | null;
  /** one line, at most 100 characters */
  preview: string;
  children: string[];
  label: string | null;
}

export interface TreeJson {
  leafId: string | null;
  nodes: TreeJsonNode[];
}

const PREVIEW_CHARS = 100;

/** The tree as JSON; `only` limits the nodes to a selection (--branch, --labels, --since), in its order. */
export function treeJson(session: SessionManager, only?: readonly SessionTreeNode[]): TreeJson {
  const selected = only ?? flattenTree(session.getTree()).map(({ node }) => node);
  const nodes = selected.map((node): TreeJsonNode => {
    const { entry } = node;
    return {
      id: entry.id,
      parentId: entry.parentId,
      type: entry.type,
      role: entry.type === "message" ? entry.message.role : null,
      timestamp: typeof entry.timestamp === "string" ? entry.timestamp : null,
      preview: clip(entryPreview(entry, previewReach(PREVIEW_CHARS)).text.replace(/\s+/g, " ").trim(), PREVIEW_CHARS),
      children: node.children.map((c) => c.entry.id),
      label: node.label ?? null,
    };
  });
  return { leafId: session.getLeafId(), nodes };
}
