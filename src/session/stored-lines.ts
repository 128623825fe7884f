/**
 * Where a session's lines are in its store, and which entries changed since (tree.ts): so a
 * rewrite copies every unchanged line from the store byte for byte (docs/ARCHITECTURE.md, storage
 * decisions) and serializes only new and changed entries, and after it, where each line went.
 */
import type { LineSource, StoredRange } from "../storage/line-source.js";
import type { AgentMessage } from "../format/message-types.js";
import type { SessionHeader } from "../format/entry-types.js";
import type { IndexNode } from "./index-node.js";

type Place = { line: number; offset: number; length: number };

export class StoredLines {
  /** where the lines are as read (or as last rewritten); undefined: every rewrite serializes */
  lines: LineSource | undefined;
  /** where the header's line is in `lines` */
  headerLine: Place | undefined;
  /** oh-my-pi's title slot before the header (format/title-slot.ts): where it is, and its text as read */
  titleSlot: (Place & { text: string }) | undefined;
  /**
   * entries changed in memory since their line was written: the message then, where the line is,
   * and the line to write instead of serializing the entry, when the change came with one
   */
  readonly edits = new Map<IndexNode, { message: AgentMessage; offset: number; text?: string }>();

  /**
   * The session as lines for a rewrite: the title slot (copied as the store holds it now: omp
   * may have retitled in place), the header (its title edited when `headerChanged`), then `nodes` in
   * file order. Numbers beyond a double, escapes, spacing, key order and keys written twice
   * survive in every line copied. Without lines to copy from, every entry is serialized, its body
   * read first (`loadAll`). Throws when the store no longer holds a line where it was read
   * (another program changed it), before anything is written.
   */
  forRewrite(nodes: readonly IndexNode[], header: SessionHeader, headerChanged: boolean, loadAll: () => void): string[] {
    const slot = this.titleSlot ? 1 : 0;
    const out = new Array<string>(nodes.length + 1 + slot);
    const source = this.lines;
    if (!source) loadAll();
    const copied: StoredRange[] = [];
    const at: number[] = [];
    if (this.titleSlot) {
      if (source) {
        copied.push({ id: "", titleSlot: true, ...this.titleSlot });
        at.push(0);
      } else out[0] = this.titleSlot.text;
    }
    // a changed header (a new title) is the stored line with that edit, when the edit says the same
    let editHeader = -1;
    if (source && this.headerLine) {
      if (headerChanged) editHeader = copied.length;
      copied.push({ id: header.id, ...this.headerLine });
      at.push(slot);
    } else out[slot] = JSON.stringify(header);
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i];
      if (source && node.offset >= 0) {
        copied.push(node);
        at.push(i + 1 + slot);
      } else out[i + 1 + slot] = (this.edits.size > 0 ? this.edits.get(node)?.text : undefined) ?? JSON.stringify(node.entry);
    }
    if (copied.length > 0) {
      const texts = source!.texts(copied);
      for (let k = 0; k < texts.length; k++) out[at[k]] = k === editHeader ? headerLine(texts[k], header) : texts[k];
    }
    return out;
  }

  /** The line of each node in the store, when unchanged since read or last rewritten, or given with its change; else undefined. */
  linesOf(nodes: readonly (IndexNode | undefined)[]): (string | undefined)[] {
    const out = new Array<string | undefined>(nodes.length).fill(undefined);
    const found: IndexNode[] = [];
    const at: number[] = [];
    nodes.forEach((node, i) => {
      if (node && node.offset >= 0 && this.lines) {
        found.push(node);
        at.push(i);
      } else if (node) out[i] = this.edits.get(node)?.text;
    });
    if (found.length > 0) {
      const texts = this.lines!.texts(found);
      for (let k = 0; k < texts.length; k++) out[at[k]] = texts[k];
    }
    return out;
  }

  /**
   * The store now holds `lines`, what forRewrite gave for `nodes`: each line's place in them
   * becomes its entry's, and no entry counts as changed. True when the lines are read from the
   * new file from now on (bodies still on disk must be read from it too).
   */
  rewritten(lines: readonly string[], nodes: readonly IndexNode[]): boolean {
    const slot = this.titleSlot ? 1 : 0;
    if (lines.length !== nodes.length + 1 + slot) throw new Error(`a rewrite of ${lines.length} lines does not match ${nodes.length} entries`);
    this.edits.clear();
    if (!this.lines) return false;
    this.lines = this.lines.rewritten(lines);
    // each line's place in the new file, in order: the title slot, the header, the entries
    let offset = 0;
    const place = (index: number): Place => {
      const length = Buffer.byteLength(lines[index], "utf8");
      const at = { line: index + 1, offset, length };
      offset += length + 1;
      return at;
    };
    if (this.titleSlot) this.titleSlot = { ...place(0), text: lines[0] };
    this.headerLine = place(slot);
    for (let i = 0; i < nodes.length; i++) Object.assign(nodes[i], place(i + 1 + slot));
    return true;
  }
}

/** A title member's value as written: a JSON string, its escapes included. */
const TITLE_MEMBER = /"title"\s*:\s*"(?:[^"\\]|\\.)*"/g;

/**
 * The header line `header` is, made from the `stored` line by setting, replacing or removing its
 * title alone, so the fields bonsai does not know keep their bytes (`1e400`, an escape, a key
 * written twice); each edit is taken only when it reads back as `header`, else the header is
 * serialized whole.
 */
export function headerLine(stored: string, header: SessionHeader): string {
  const wanted = JSON.stringify(header);
  const says = (line: string) => {
    try {
      return JSON.stringify(JSON.parse(line)) === wanted;
    } catch {
      return false;
    }
  };
  const title = typeof header.title === "string" ? JSON.stringify(header.title) : undefined;
  const candidates: string[] = [];
  for (const m of stored.matchAll(TITLE_MEMBER)) {
    const [before, after] = [stored.slice(0, m.index), stored.slice(m.index + m[0].length)];
    if (title !== undefined) candidates.push(`${before}"title":${title}${after}`);
    // removed: with the comma before it, or after it when it is the first member
    else candidates.push(before.replace(/,\s*$/, "") + after, before + after.replace(/^\s*,/, ""));
  }
  if (title !== undefined) candidates.push(stored.replace(/\}(\s*)$/, `,"title":${title}}$1`));
  return candidates.find(says) ?? wanted;
}
