/**
 * Where the lines of a session still are as they were read, so that a rewrite copies every line
 * it does not change instead of serializing its entry again (docs/ARCHITECTURE.md, storage
 * decisions). JSON.stringify of a parsed line is not that line: 1234567890123456789 becomes
 * 1234567890123456800, 1e400 becomes null, 1.0 becomes 1, a key written twice loses a value,
 * escapes, spacing and key order change, and no backup or archive could give them back.
 *
 * A file's lines are read again from the file, in large reads; a database's are the rows it was
 * read from, kept (a database session is read whole anyway).
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { jsonlBytes, lineId } from "../format/lines.js";
import { type ByteRange, readRanges } from "./bodies.js";
import { titleSlotOfLines } from "../format/title-slot.js";

/** A stored line and the entry (or header) it must hold. */
export interface StoredRange extends ByteRange {
  /** the id of the entry or header on the line */
  readonly id: string;
  /** 1-based line number: a database row's place, and where errors point */
  readonly line: number;
  /** the line is oh-my-pi's title slot (no id: it must still be a title slot) */
  readonly titleSlot?: boolean;
}

/** The lines of a session as its store holds them. */
export interface LineSource {
  /**
   * The text of each range, in the same order, exactly as stored (bytes that are not UTF-8 read
   * as replacement characters). Throws when a line no longer holds its entry's id: the store was
   * changed behind the session's back, and copying would write the wrong lines.
   */
  texts(ranges: readonly StoredRange[]): string[];
  /**
   * The source once the store holds `lines` instead (a rewrite wrote them): a range is then the
   * line's number in `lines` and its bytes' place in them joined as a JSONL file holds them.
   */
  rewritten(lines: readonly string[]): LineSource;
}

const CR = 0x0d;

/** Whether `text` is the line of entry `id`. */
function holds(text: string, id: string): boolean {
  if (lineId(text) === id) return true;
  // the first `"id":"` is not the entry's (other key order, spacing, an escape, a nested id):
  // the parse is rare and says for sure
  try {
    return (JSON.parse(text) as { id?: unknown } | null)?.id === id;
  } catch {
    return false; // not JSON: not the line the session read there
  }
}

/** `text`, checked to be the line of the entry `range` says. */
function checked(text: string, range: StoredRange, where: string): string {
  if (range.titleSlot ? titleSlotOfLines([text]) !== undefined : holds(text, range.id)) return text;
  throw new Error(
    `${where}:${range.line}: cannot copy ${range.titleSlot ? "oh-my-pi's title line" : `entry ${range.id}`} into the rewrite: the line there no longer holds it; the session was changed by another program since it was opened, open it again`,
  );
}

/** A session file's lines, read by path at each rewrite (the file after our own last rewrite). */
export class FileLines implements LineSource {
  constructor(readonly path: string) {}

  texts(ranges: readonly StoredRange[]): string[] {
    const out = new Array<string>(ranges.length);
    if (ranges.length === 0) return out;
    const fd = openSync(this.path, "r");
    try {
      // a line's range leaves out the carriage return of a CRLF ending (format/lines.ts): the byte
      // after it is read too, so a copied line keeps the ending it had
      const fileSize = fstatSync(fd).size;
      const reads = ranges.map((r) => (r.offset + r.length < fileSize ? { offset: r.offset, length: r.length + 1 } : r));
      readRanges(
        reads,
        (buffer, size, position) => {
          let done = 0;
          while (done < size) {
            const n = readSync(fd, buffer, done, size - done, position + done);
            if (n === 0) throw new Error(`${this.path}: is shorter than when it was read; the session was changed by another program since it was opened, open it again`);
            done += n;
          }
        },
        (i, bytes) => {
          const next = reads[i] === ranges[i] ? undefined : bytes[bytes.length - 1];
          const line = next === undefined || next === CR ? bytes : bytes.subarray(0, bytes.length - 1);
          out[i] = checked(line.toString("utf8"), ranges[i], this.path);
        },
      );
    } finally {
      closeSync(fd);
    }
    return out;
  }

  // the path names the new file, and the ranges are in it
  rewritten(): LineSource {
    return this;
  }
}

/** A database session's rows: line n (of a range) is the n-th row. */
export class RowLines implements LineSource {
  /**
   * The rows as the bytes the loader read, when a row holds a newline (not one bonsai stored):
   * it was read as several lines, so line numbers and rows part, and ranges find the lines.
   */
  private joined: Buffer | undefined;

  constructor(
    private readonly rows: readonly string[],
    private readonly location: string,
    /** no row holds a newline (lines a rewrite stored); otherwise looked at on first use */
    private split: boolean | undefined = undefined,
  ) {}

  texts(ranges: readonly StoredRange[]): string[] {
    this.split ??= this.rows.some((row) => row.includes("\n"));
    if (this.split) {
      this.joined ??= jsonlBytes(this.rows);
      const joined = this.joined;
      return ranges.map((range) => checked(joined.toString("utf8", range.offset, range.offset + range.length), range, this.location));
    }
    return ranges.map((range) => checked(this.rows[range.line - 1] ?? "", range, this.location));
  }

  // the rows are these lines now, each one line
  rewritten(lines: readonly string[]): LineSource {
    return new RowLines(lines, this.location, false);
  }
}
