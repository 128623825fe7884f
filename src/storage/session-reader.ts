/**
 * The line-by-line reader behind every file and text load (load.ts): the header first (a problem
 * there stops the open), then each entry validated, indexed or kept, and every line it cannot use
 * reported with its number. Its state can be taken at the end of the last whole line and given
 * back, so an open index (open-index.ts) resumes a read where the cached one ended.
 */
import { readMessagePrefix } from "./bodies.js";
import { finishesJsonObjects, splitGluedObjects } from "../format/json-syntax.js";
import { decodeRange, isUtf8Range, type RawLine } from "../format/lines.js";
import { isKnownEntryType, validateEntry, validateHeader } from "../format/validate.js";
import { isTitleSlot } from "../format/title-slot.js";
import { CURRENT_SESSION_VERSION, type FileEntry, type SessionEntry, type SessionHeader } from "../format/entry-types.js";
import { errorText } from "../util/error-text.js";
import type { BodyLoading, EntrySink, LoadIssue, LoadIssueKind } from "./load-types.js";

const MAX_REASON = 120;

function jsonReason(error: unknown): string {
  const text = errorText(error);
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text;
}

/**
 * What a read of a current file had found at the end of its last whole line: enough to go on
 * reading from there (SessionReader.resume). Issues are copies; the header is where its line is.
 */
export interface ReaderState {
  /** bytes and lines read up to and including the last newline */
  bytes: number;
  lines: number;
  header: { line: number; offset: number; length: number };
  titleSlot?: { line: number; offset: number; length: number };
  issues: LoadIssue[];
  /** each unknown entry type, the index in `issues` of its issue, and how many lines had it */
  unknownTypes: [type: string, issue: number, lines: number][];
  deferred: number;
  lastDeferredId?: string;
}

/** Accumulates lines into a LoadedSession; shared by the file and the text entry points. */
export class SessionReader {
  header: SessionHeader | undefined;
  headerProblem: { line: number; reason: string } | undefined;
  titleSlot: { line: number; offset: number; length: number; text: string } | undefined;
  readonly fileEntries: FileEntry[] = [];
  readonly issues: LoadIssue[] = [];
  private readonly ids = new Set<string>();
  private readonly unknownTypes = new Map<string, { issue: LoadIssue; lines: number }>();
  private requireTreeFields = true;
  /** where entries of a current (v3) file go, when the caller indexes them as they are read */
  private into: EntrySink | undefined;
  deferred = 0;
  /** the id of the last message indexed from its prefix: usually the next one's parent */
  private lastDeferredId: string | undefined;
  lastTerminated = true;
  /** where an unterminated last line that was skipped as torn starts */
  tornTailAt: number | undefined;
  /** the number of the last line read */
  private lastLine = 0;
  /** where the header's line is, in a current file */
  private headerRange: { line: number; offset: number; length: number } | undefined;
  /** the state before an unterminated last line, which a later read may find finished */
  private beforeTail: ReaderState | undefined;

  /** whether the entries went into the index (a current file) rather than into fileEntries */
  get indexed(): boolean {
    return this.into !== undefined;
  }

  /** whether message lines are indexed from their prefix instead of parsed */
  private readonly scansMessages: boolean;

  constructor(
    private readonly bodies: BodyLoading = "eager",
    private readonly index?: EntrySink,
  ) {
    this.scansMessages = bodies === "checked" || bodies === "trusted";
  }

  /**
   * A reader that goes on from `state`, the header and title slot given back as they were read
   * (their lines are in the file at the state's ranges), into `index`, which already holds what the
   * state's lines added. Only a current file's state is ever taken, so entries go into the index.
   */
  static resume(state: ReaderState, header: SessionHeader, titleSlotText: string | undefined, bodies: BodyLoading, index: EntrySink): SessionReader {
    const reader = new SessionReader(bodies, index);
    reader.header = header;
    reader.headerRange = state.header;
    if (state.titleSlot && titleSlotText !== undefined) reader.titleSlot = { ...state.titleSlot, text: titleSlotText };
    reader.fileEntries.push(header);
    reader.requireTreeFields = true;
    reader.into = index;
    reader.issues.push(...state.issues.map((issue) => ({ ...issue })));
    for (const [type, at, lines] of state.unknownTypes) reader.unknownTypes.set(type, { issue: reader.issues[at], lines });
    reader.deferred = state.deferred;
    reader.lastDeferredId = state.lastDeferredId;
    reader.lastLine = state.lines;
    return reader;
  }

  /** Sends the entries of the lines still to come into `sink` instead (a recorder wrapping the index). */
  redirect(sink: EntrySink): void {
    this.into = sink;
  }

  /**
   * The state at the end of the last whole line of `size` bytes read, or undefined when there is
   * nothing to go on from (not a current file, or no usable header).
   */
  stateAt(size: number): ReaderState | undefined {
    return this.beforeTail ?? this.capture(size, this.lastLine);
  }

  private capture(bytes: number, lines: number): ReaderState | undefined {
    if (!this.into || !this.header || !this.headerRange || this.headerProblem) return undefined;
    const issues = this.issues.map((issue) => ({ ...issue }));
    const unknownTypes: ReaderState["unknownTypes"] = [];
    for (const [type, seen] of this.unknownTypes) unknownTypes.push([type, this.issues.indexOf(seen.issue), seen.lines]);
    const slot = this.titleSlot;
    return {
      bytes,
      lines,
      header: this.headerRange,
      ...(slot && { titleSlot: { line: slot.line, offset: slot.offset, length: slot.length } }),
      issues,
      unknownTypes,
      deferred: this.deferred,
      ...(this.lastDeferredId !== undefined && { lastDeferredId: this.lastDeferredId }),
    };
  }

  onLine = (line: RawLine): void => {
    this.lastTerminated = line.terminated;
    this.lastLine = line.lineNo;
    if (!line.terminated) this.beforeTail = this.capture(line.offset, line.lineNo - 1);
    if (line.end === line.start || this.headerProblem) return;
    // the torn-tail check needs the full parse, so an unterminated last line never takes this path
    if (this.into && this.scansMessages && line.terminated && this.deferMessageLine(line)) return;
    const { text, validUtf8 } = decodeRange(line.buffer, line.start, line.end, line.knownUtf8);
    if (text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      if (!this.header && text.startsWith("\uFEFF")) {
        // invisible in the JSON error: name it, and how to remove it
        this.headerProblem = {
          line: line.lineNo,
          reason: "starts with a UTF-8 byte order mark (bytes EF BB BF), which session files never have; remove those 3 bytes (e.g. `sed -i '1s/^\\xEF\\xBB\\xBF//' FILE`) and open it again",
        };
      } else if (!this.header) {
        this.headerProblem = { line: line.lineNo, reason: `not a session file: the first line is not JSON (${jsonReason(error)})` };
      } else if (line.terminated && this.readGluedObjects(line)) {
        return;
      } else if (!line.terminated) {
        this.tornTailAt = line.offset;
        this.issue("torn-tail", line.lineNo, `last line is incomplete (${line.end - line.start} bytes, likely a torn write); skipped, the next append starts on a new line`);
      } else {
        this.issue("malformed-json", line.lineNo, `malformed JSON (${jsonReason(error)}); line skipped`);
      }
      return;
    }
    if (!this.header) {
      // the first line read (an earlier one would have set headerProblem) may be omp's title slot
      if (!this.titleSlot && isTitleSlot(value)) {
        this.titleSlot = { line: line.lineNo, offset: line.offset, length: line.end - line.start, text };
        return;
      }
      const problem = validateHeader(value);
      if (problem) {
        this.headerProblem = { line: line.lineNo, reason: problem };
        return;
      }
      this.header = value as SessionHeader;
      this.requireTreeFields = typeof this.header.version === "number" && this.header.version >= 2;
      const current = typeof this.header.version === "number" && this.header.version >= CURRENT_SESSION_VERSION;
      if (current) this.into = this.index;
      const slot = this.titleSlot;
      if (slot) this.into?.titleSlotAt?.(slot.line, slot.offset, slot.length, slot.text);
      this.into?.headerAt?.(line.lineNo, line.offset, line.end - line.start);
      this.headerRange = { line: line.lineNo, offset: line.offset, length: line.end - line.start };
      this.fileEntries.push(this.header);
      if (!validUtf8) this.issue("invalid-utf8", line.lineNo, "header has bytes that are not UTF-8; read with replacement characters", false);
      return;
    }
    if ((value as { type?: unknown })?.type === "session") {
      this.issue("duplicate-header", line.lineNo, "a second session header; line skipped");
      return;
    }
    const problem = validateEntry(value, this.requireTreeFields);
    if (problem) {
      this.issue("invalid-entry", line.lineNo, `invalid entry: ${problem}; line skipped`);
      return;
    }
    const entry = value as SessionEntry;
    let added: boolean;
    if (!this.into) {
      added = !this.requireTreeFields || !this.ids.has(entry.id);
      if (added) {
        if (this.requireTreeFields) this.ids.add(entry.id);
        this.fileEntries.push(entry);
      }
    } else if (this.bodies !== "eager" && (entry.type === "message" || entry.type === "custom_message")) {
      const role = entry.type === "message" ? entry.message.role : undefined;
      added = this.into.addDeferred(entry.type, entry.id, entry.parentId, role, line.lineNo, line.offset, line.end - line.start);
      if (added) this.deferred++;
    } else added = this.into.addIfNew(entry, line.lineNo, line.offset, line.end - line.start);
    if (!added) {
      this.duplicate(entry.id, line.lineNo);
      return;
    }
    if (!validUtf8) this.issue("invalid-utf8", line.lineNo, "bytes that are not UTF-8, read with replacement characters", false);
    if (!isKnownEntryType(entry.type)) this.unknownType(entry.type, line.lineNo);
  };

  /**
   * A line of two or more complete objects written back to back (two programs appending at once):
   * each is read as its own entry, in order, at its own byte range, so a rewrite copies each to a
   * line of its own; reported, not skipped. False when the line is not such a run.
   */
  private readGluedObjects(line: RawLine): boolean {
    const pieces = splitGluedObjects(line.buffer, line.start, line.end);
    if (!pieces) return false;
    this.issue("glued-objects", line.lineNo, `${pieces.length} JSON objects on one line (two writes at once?); each read as its own entry, a rewrite puts them on separate lines`, false);
    const { buffer, lineNo, knownUtf8 } = line;
    for (const [start, end] of pieces) {
      const offset = line.offset + (start - line.start);
      this.onLine({ lineNo, offset, buffer, start, end, knownUtf8, terminated: true, bytes: buffer.subarray(start, end) });
    }
    return true;
  }

  /** An entry type no dialect knows: reported once per type, at its first line, with how many lines have it. */
  private unknownType(type: string, lineNo: number): void {
    const seen = this.unknownTypes.get(type);
    const lines = (seen?.lines ?? 0) + 1;
    const message = `unknown entry type "${type}"${lines > 1 ? ` (${lines} lines, the first here)` : ""}; kept, ignored in context`;
    if (seen) {
      seen.lines = lines;
      seen.issue.message = message;
      return;
    }
    this.issue("unknown-type", lineNo, message, false);
    this.unknownTypes.set(type, { issue: this.issues[this.issues.length - 1], lines });
  }

  private duplicate(id: string, lineNo: number): void {
    this.issue("duplicate-id", lineNo, `duplicate entry id ${id}; the later line is skipped`);
  }

  /** A message line whose prefix is in the usual shape (and, when checking, whose JSON is well formed) is indexed without a parse. */
  private deferMessageLine(line: RawLine): boolean {
    const prefix = readMessagePrefix(line.buffer, line.start, line.end, this.lastDeferredId);
    if (!prefix) return false;
    // a line that is not JSON goes on to the full parse, which reports and skips it
    if (this.bodies === "checked" && !finishesJsonObjects(line.buffer, prefix.bodyAt, line.end, 2)) return false;
    if (!this.into!.addDeferred("message", prefix.id, prefix.parentId, prefix.role, line.lineNo, line.offset, line.end - line.start)) {
      this.duplicate(prefix.id, line.lineNo);
      return true;
    }
    this.lastDeferredId = prefix.id;
    this.deferred++;
    if (!isUtf8Range(line)) this.issue("invalid-utf8", line.lineNo, "bytes that are not UTF-8, read with replacement characters", false);
    return true;
  }

  private issue(kind: LoadIssueKind, line: number, message: string, skipped = true): void {
    this.issues.push({ kind, line, message, skipped });
  }
}
