/**
 * The links of a session's tree (tree.ts): its nodes in file order, by id, and the children whose
 * parent is not indexed (yet), by that parent id; link() adds one node and works out what its path
 * holds (index-node.ts), in O(1) for an entry under one already indexed.
 */
import { IdTable } from "./id-table.js";
import { type IndexNode, sourcesModel } from "./index-node.js";

export class NodeLinks {
  readonly nodes: IndexNode[] = [];
  readonly byId = new IdTable<IndexNode>(this.nodes, true);
  /** children whose parent id is null or not (yet) indexed, by that id */
  readonly waiting = new Map<string | null, IndexNode[]>();

  /** Indexes `node`; with `refuseDuplicate`, an id already indexed makes it return false and change nothing. */
  link(node: IndexNode, refuseDuplicate: boolean): boolean {
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
}
