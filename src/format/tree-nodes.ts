/**
 * Views of the node tree `getTree()` returns, shared by the displays of it (`bonsai tree`, the
 * `/tree` selector of chat). Pure: nodes in, nodes out.
 */
import type { SessionEntry, SessionTreeNode } from "./entry-types.js";

/**
 * The nodes in order, each one whose entry is `hidden` replaced by its own children (and so on
 * down), so a display can leave bookkeeping entries out without losing what hangs off them.
 */
export function withoutHidden(
  nodes: readonly SessionTreeNode[],
  hidden: (entry: SessionEntry) => boolean,
): SessionTreeNode[] {
  const out: SessionTreeNode[] = [];
  const pending = [...nodes].reverse();
  while (pending.length > 0) {
    const node = pending.pop()!;
    if (hidden(node.entry)) for (let i = node.children.length - 1; i >= 0; i--) pending.push(node.children[i]);
    else out.push(node);
  }
  return out;
}
