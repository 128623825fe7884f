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

  /** Counts a node indexed without its body. */
  deferred(): void {
    this.pending++;
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
      if (!this.reader) throw new Error("entries were indexed without their bodies and no reader was attached");
      const read = this.reader.read(missing);
      for (let i = 0; i < missing.length; i++) missing[i].entry = read[i];
      this.pending -= missing.length;
      this.releaseIfDone();
    }
    return nodes.map((n) => n.entry!);
  }

  /** Releases the file; a later read opens it again. */
  close(): void {
    this.reader?.close();
  }

  private releaseIfDone(): void {
    if (this.pending === 0) this.reader?.close();
  }
}
