/**
 * The open index's content: the calls a read of a session file made into its entry sink (load.ts,
 * EntrySink), kept so the next open makes the same calls without reading the lines again
 * (open-index-file.ts keeps them on disk). A call holds structure only: types, ids, parent ids,
 * roles and where lines are. The few parsed entries (compactions, labels, model changes…), the
 * header and the title slot are read again from their ranges of the session file, so the index
 * holds none of the conversation's text and a file that no longer matches fails the replay.
 */
import type { BodyReader } from "./bodies.js";
import type { LineSource } from "./line-source.js";
import type { CallTable, EntrySink } from "./load-types.js";
import type { SessionEntry, SessionHeader } from "../format/entry-types.js";
import { validateEntry, validateHeader } from "../format/validate.js";
import { isTitleSlot } from "../format/title-slot.js";

export const DEFERRED = 0;
export const ENTRY = 1;
const HEADER = 2;
const TITLE_SLOT = 3;

/** What a packed field (CallColumns.packed) holds: the call's kind, and a deferred call's type and role in `names`. */
export const kindOf = (packed: number): number => packed & 0xf;
const typeAt = (packed: number): number => (packed >>> 4) & 0xfff;
const roleAt = (packed: number): number => packed >>> 16;
export const typeOf = (packed: number, names: readonly string[]): string | undefined => names[typeAt(packed)];
export const roleOf = (packed: number, names: readonly string[]): string | null | undefined => (roleAt(packed) === 0 ? null : names[roleAt(packed) - 1]);

/**
 * Calls as columns, one element per call, in the layout the index's bytes use (open-index-codec.ts):
 * a read of 50,000 entries records without making an object per call, into arrays that double as
 * they fill. `packed` holds the kind (low 4 bits: DEFERRED for EntrySink.addDeferred, ENTRY for
 * addIfNew, HEADER for headerAt, TITLE_SLOT for titleSlotAt), and for a deferred call the index of
 * its type in `names` (bits 4-15) and of its role plus one (bits 16-31, 0 for none). Ids and parent
 * ids are kept as the strings they were read as; the other kinds are read again from their ranges.
 */
export class CallColumns {
  length = 0;
  packed = new Int32Array(1024);
  lines = new Int32Array(1024);
  lengths = new Int32Array(1024);
  offsets = new Float64Array(1024);
  ids: string[] = new Array<string>(1024);
  parents: (string | null)[] = new Array<string | null>(1024);
  /** the types and roles `packed` points at */
  readonly names: string[] = [];
  private readonly nameIndex = new Map<string, number>();

  push(kind: number, type: string, id: string, parentId: string | null, role: string | null, line: number, offset: number, length: number): void {
    const i = this.length++;
    if (i === this.packed.length) this.grow();
    this.packed[i] = kind === DEFERRED ? (this.nameAt(type) << 4) | ((role === null ? 0 : this.nameAt(role) + 1) << 16) : kind; // read by kindOf, typeOf, roleOf
    this.lines[i] = line;
    this.lengths[i] = length;
    this.offsets[i] = offset;
    this.ids[i] = id;
    this.parents[i] = parentId;
  }

  private nameAt(name: string): number {
    let at = this.nameIndex.get(name);
    if (at === undefined) {
      at = this.names.length;
      this.names.push(name);
      this.nameIndex.set(name, at);
    }
    return at;
  }

  private grow(): void {
    const double = <T extends Int32Array | Float64Array>(column: T): T => {
      const next = new (column.constructor as new (n: number) => T)(column.length * 2);
      next.set(column);
      return next;
    };
    this.packed = double(this.packed);
    this.lines = double(this.lines);
    this.lengths = double(this.lengths);
    this.offsets = double(this.offsets);
    const more = <T>(column: T[]): T[] => {
      const next = new Array<T>(column.length * 2);
      for (let i = 0; i < column.length; i++) next[i] = column[i];
      return next;
    };
    this.ids = more(this.ids);
    this.parents = more(this.parents);
  }

  /** Drops the calls made by lines after `line` (a state's end: a later, unfinished line's calls). */
  keepThrough(line: number): void {
    while (this.length > 0 && this.lines[this.length - 1] > line) this.length--;
  }

  /** The calls as a source, in order. */
  readonly source: CallSource = (visit, rangesOnly) => {
    for (let i = 0; i < this.length; i++) {
      const packed = this.packed[i];
      const kind = kindOf(packed);
      const deferred = kind === DEFERRED;
      if (deferred && rangesOnly) continue;
      const type = deferred ? (typeOf(packed, this.names) ?? "") : "";
      const role = deferred ? (roleOf(packed, this.names) ?? null) : null;
      visit(kind, type, this.ids[i] ?? "", this.parents[i] ?? null, role, this.lines[i], this.offsets[i], this.lengths[i]);
    }
  };

  /** The calls of `source`, then these. */
  static of(source: CallSource | undefined, then: CallColumns): CallColumns {
    const all = new CallColumns();
    const add: CallVisitor = (kind, type, id, parentId, role, line, offset, length) => all.push(kind, type, id, parentId, role, line, offset, length);
    source?.(add);
    then.source(add);
    return all;
  }
}

/** Whether `text` has no lone surrogate (String.prototype.isWellFormed, which the TypeScript lib here does not declare). */
const wellFormed = (text: string): boolean => !/\p{Surrogate}/u.test(text);

/** Passes every call on to the sink it wraps and, while recording, keeps it, in order. */
export class RecordingSink implements EntrySink {
  readonly calls = new CallColumns();
  /** false once a call came without the range it was read from: such a read cannot be replayed */
  complete = true;
  /** false once the sink refused an entry (its id was there already) */
  distinct = true;

  constructor(
    private readonly inner: EntrySink,
    private readonly recording: boolean,
  ) {}

  addIfNew(entry: SessionEntry, line?: number, offset?: number, length?: number): boolean {
    if (line === undefined || offset === undefined || length === undefined) this.complete = false;
    else if (this.recording) this.calls.push(ENTRY, "", "", null, null, line, offset, length);
    return this.accepted(this.inner.addIfNew(entry, line, offset, length));
  }

  addDeferred(type: string, id: string, parentId: string | null, role: string | undefined, line: number, offset: number, length: number): boolean {
    // an id with a lone surrogate would not come back from the index's UTF-8 as it went in
    if (!wellFormed(id) || (parentId !== null && !wellFormed(parentId))) this.complete = false;
    if (this.recording) this.calls.push(DEFERRED, type, id, parentId, role ?? null, line, offset, length);
    return this.accepted(this.inner.addDeferred(type, id, parentId, role, line, offset, length));
  }

  private accepted(added: boolean): boolean {
    if (!added) this.distinct = false;
    return added;
  }

  attachBodies(bodies: BodyReader): void {
    this.inner.attachBodies(bodies);
  }

  expect(count: number, distinct?: boolean): void {
    this.inner.expect?.(count, distinct);
  }

  headerAt(line: number, offset: number, length: number): void {
    if (this.recording) this.calls.push(HEADER, "", "", null, null, line, offset, length);
    this.inner.headerAt?.(line, offset, length);
  }

  titleSlotAt(line: number, offset: number, length: number, text: string): void {
    if (this.recording) this.calls.push(TITLE_SLOT, "", "", null, null, line, offset, length);
    this.inner.titleSlotAt?.(line, offset, length, text);
  }

  attachLines(lines: LineSource): void {
    this.inner.attachLines?.(lines);
  }
}

/** Each call, in order, as its fields: how a replay reads calls without building them (open-index-codec.ts). */
export type CallVisitor = (kind: number, type: string, id: string, parentId: string | null, role: string | null, line: number, offset: number, length: number) => void;
/** Makes the calls; `rangesOnly` leaves out the deferred ones (no id strings made), for a pass over the lines the index points at. */
export type CallSource = ((visit: CallVisitor, rangesOnly?: boolean) => void) & { readonly count?: number; readonly table?: CallTable };

/** What a replay read back from the file: the header and title slot a resumed reader starts from. */
export interface Replayed {
  header: SessionHeader;
  titleSlotText?: string;
}

/**
 * Makes the calls of `source` again into `index`, reading each range call's line through `read`.
 * Every line is read and checked before the first call is made, so a file that no longer holds
 * what the calls say leaves the index untouched: undefined, and the caller reads the file instead.
 * `distinct`: the read that made the calls had every entry accepted, so the index can take their
 * ids on trust (EntrySink.expect).
 */
export function replaySinkCalls(source: CallSource, index: EntrySink, read: (offset: number, length: number) => string, distinct = false): Replayed | undefined {
  const entries: SessionEntry[] = [];
  /** calls that index no entry: the header and the title slot */
  let others = 0;
  let header: SessionHeader | undefined;
  let titleSlotText: string | undefined;
  /** where the header and the title slot are, for a sink that takes the other calls whole */
  let headerRange: [number, number, number] | undefined;
  let titleSlotRange: [number, number, number] | undefined;
  let bad = false;
  source((kind, _type, _id, _parentId, _role, line, offset, length) => {
    if (kind === DEFERRED || bad) return;
    if (kind !== ENTRY) others++;
    if (kind === HEADER) headerRange = [line, offset, length];
    else if (kind === TITLE_SLOT) titleSlotRange = [line, offset, length];
    const text = read(offset, length);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      bad = true;
      return;
    }
    if (kind === ENTRY) {
      if (validateEntry(value, true)) bad = true;
      else entries.push(value as SessionEntry);
    } else if (kind === HEADER) {
      if (header || validateHeader(value)) bad = true;
      else header = value as SessionHeader;
    } else if (isTitleSlot(value)) titleSlotText = text;
    else bad = true;
  }, true);
  if (bad || !header) return undefined;
  if (source.count !== undefined) index.expect?.(source.count - others, distinct);
  // a sink that links entries when they are reached takes the calls as they are
  if (distinct && source.table && index.defer?.(source.table, entries)) {
    if (headerRange) index.headerAt?.(...headerRange);
    if (titleSlotRange) index.titleSlotAt?.(...titleSlotRange, titleSlotText!);
    return { header, ...(titleSlotText !== undefined && { titleSlotText }) };
  }
  let next = 0;
  source((kind, type, id, parentId, role, line, offset, length) => {
    if (kind === DEFERRED) index.addDeferred(type, id, parentId, role ?? undefined, line, offset, length);
    else if (kind === ENTRY) index.addIfNew(entries[next++], line, offset, length);
    else if (kind === HEADER) index.headerAt?.(line, offset, length);
    else index.titleSlotAt?.(line, offset, length, titleSlotText!);
  });
  return { header, ...(titleSlotText !== undefined && { titleSlotText }) };
}
