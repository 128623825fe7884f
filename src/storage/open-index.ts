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
import type { EntrySink } from "./load-types.js";
import type { SessionEntry, SessionHeader } from "../format/entry-types.js";
import { validateEntry, validateHeader } from "../format/validate.js";
import { isTitleSlot } from "../format/title-slot.js";

/** A message or custom message indexed with its body left in the file (EntrySink.addDeferred). */
type DeferredCall = [kind: 0, type: string, id: string, parentId: string | null, role: string | null, line: number, offset: number, length: number];
/** A parsed entry (EntrySink.addIfNew), the header's line, oh-my-pi's title slot: each read again from its range. */
type RangeCall = [kind: 1 | 2 | 3, line: number, offset: number, length: number];
export type SinkCall = DeferredCall | RangeCall;

const ENTRY = 1;
const HEADER = 2;
const TITLE_SLOT = 3;

/** Passes every call on to the sink it wraps and keeps it, in order. */
export class RecordingSink implements EntrySink {
  readonly calls: SinkCall[] = [];
  /** false once a call came without the range it was read from: such a read cannot be replayed */
  complete = true;

  constructor(private readonly inner: EntrySink) {}

  addIfNew(entry: SessionEntry, line?: number, offset?: number, length?: number): boolean {
    if (line === undefined || offset === undefined || length === undefined) this.complete = false;
    else this.calls.push([ENTRY, line, offset, length]);
    return this.inner.addIfNew(entry, line, offset, length);
  }

  addDeferred(type: string, id: string, parentId: string | null, role: string | undefined, line: number, offset: number, length: number): boolean {
    this.calls.push([0, type, id, parentId, role ?? null, line, offset, length]);
    return this.inner.addDeferred(type, id, parentId, role, line, offset, length);
  }

  attachBodies(bodies: BodyReader): void {
    this.inner.attachBodies(bodies);
  }

  headerAt(line: number, offset: number, length: number): void {
    this.calls.push([HEADER, line, offset, length]);
    this.inner.headerAt?.(line, offset, length);
  }

  titleSlotAt(line: number, offset: number, length: number, text: string): void {
    this.calls.push([TITLE_SLOT, line, offset, length]);
    this.inner.titleSlotAt?.(line, offset, length, text);
  }

  attachLines(lines: LineSource): void {
    this.inner.attachLines?.(lines);
  }
}

/** Each call, in order, as its fields: how a replay reads calls without building them (open-index-codec.ts). */
export type CallVisitor = (kind: number, type: string, id: string, parentId: string | null, role: string | null, line: number, offset: number, length: number) => void;
export type CallSource = (visit: CallVisitor) => void;

/** The calls of a list as a source. */
export const callsOf =
  (calls: readonly SinkCall[]): CallSource =>
  (visit) => {
    for (const call of calls) {
      if (call[0] === 0) visit(0, call[1], call[2], call[3], call[4], call[5], call[6], call[7]);
      else visit(call[0], "", "", null, null, call[1], call[2], call[3]);
    }
  };

/** What a replay read back from the file: the header and title slot a resumed reader starts from. */
export interface Replayed {
  header: SessionHeader;
  titleSlotText?: string;
}

/**
 * Makes the calls of `source` again into `index`, reading each range call's line through `read`.
 * Every line is read and checked before the first call is made, so a file that no longer holds
 * what the calls say leaves the index untouched: undefined, and the caller reads the file instead.
 */
export function replaySinkCalls(source: CallSource, index: EntrySink, read: (offset: number, length: number) => string): Replayed | undefined {
  const entries: SessionEntry[] = [];
  let header: SessionHeader | undefined;
  let titleSlotText: string | undefined;
  let bad = false;
  source((kind, _type, _id, _parentId, _role, _line, offset, length) => {
    if (kind === 0 || bad) return;
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
  });
  if (bad || !header) return undefined;
  let next = 0;
  source((kind, type, id, parentId, role, line, offset, length) => {
    if (kind === 0) index.addDeferred(type, id, parentId, role ?? undefined, line, offset, length);
    else if (kind === ENTRY) index.addIfNew(entries[next++], line, offset, length);
    else if (kind === HEADER) index.headerAt?.(line, offset, length);
    else index.titleSlotAt?.(line, offset, length, titleSlotText!);
  });
  return { header, ...(titleSlotText !== undefined && { titleSlotText }) };
}

/** The calls made by lines up to `lines` (a state's end): a later, unfinished line's calls are left out. */
export function callsThrough(calls: readonly SinkCall[], lines: number): SinkCall[] {
  const lineOf = (call: SinkCall): number => (call[0] === 0 ? call[5] : call[1]);
  let end = calls.length;
  while (end > 0 && lineOf(calls[end - 1]) > lines) end--;
  return calls.slice(0, end);
}
