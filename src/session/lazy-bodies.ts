/**
 * The bodies of indexed entries still in the file (see storage/bodies.ts): each is read the first
 * time its entry is asked for, a batch in one pass, and the file is let go once none is left.
 */
import type { BodyReader } from "../storage/bodies.js";
import type { SessionEntry } from "../format/entry-types.js";
import type { IndexNode } from "./index-node.js";

export class LazyBodies {
  /** nodes whose bodies have not been read */
  private pending = 0;
  /** reads bodies that are still on disk */
  private reader: BodyReader | undefined;

  /** Counts nodes indexed without their body. */
  deferred(count: number): void {
    this.pending += count;
  }

  /** The reader for the deferred bodies; closed as soon as every body is read. */
  attach(reader: BodyReader): void {
    this.reader = reader;
    this.releaseIfDone();
  }

  entryOf(node: IndexNode): SessionEntry {
    return node.entry ?? this.load([node])[0];
  }

  /** The entries of `nodes`, reading the bodies still on disk in one pass. */
  load(nodes: readonly IndexNode[]): SessionEntry[] {
    const missing: IndexNode[] = [];
    for (const node of nodes) if (!node.entry) missing.push(node);
    if (missing.length > 0) {
      const read = this.read(missing);
      for (let i = 0; i < missing.length; i++) missing[i].entry = read[i];
      this.pending -= missing.length;
      this.releaseIfDone();
    }
    return nodes.map((n) => n.entry!);
  }

  /**
   * Every entry of `nodes` handed to `visit` in order, the bodies still on disk read in batches and
   * not kept (a pass over a 100 MB session holds one batch, not every body); returns, for each
   * node whose body was not kept, a stand-in that holds its type, id, parent id and timestamp only.
   * A node whose timestamp `known` gives (the caller keeps what it needs of it) is neither read nor
   * visited: its stand-in takes that timestamp, which the tree orders siblings by.
   */
  visit(nodes: readonly IndexNode[], visit: (entry: SessionEntry) => void, known: (node: IndexNode) => string | undefined = () => undefined, batch = 2048): Map<IndexNode, SessionEntry> {
    const standIns = new Map<IndexNode, SessionEntry>();
    const pending: IndexNode[] = [];
    const flush = () => {
      if (pending.length === 0) return;
      const read = this.read(pending);
      for (let i = 0; i < pending.length; i++) {
        const { type, id, parentId, timestamp } = read[i];
        standIns.set(pending[i], { type, id, parentId, timestamp } as SessionEntry);
        visit(read[i]);
      }
      pending.length = 0;
    };
    for (const node of nodes) {
      if (node.entry) {
        flush();
        visit(node.entry);
        continue;
      }
      const timestamp = known(node);
      if (timestamp !== undefined) standIns.set(node, { type: node.type, id: node.id, parentId: node.parentId, timestamp } as SessionEntry);
      else if (pending.push(node) >= batch) flush();
    }
    flush();
    return standIns;
  }

  private read(nodes: readonly IndexNode[]): SessionEntry[] {
    if (!this.reader) throw new Error("entries were indexed without their bodies and no reader was attached");
    return this.reader.read(nodes);
  }

  /** Releases the file; a later read opens it again. */
  close(): void {
    this.reader?.close();
  }

  private releaseIfDone(): void {
    if (this.pending === 0) this.reader?.close();
  }
}
