/**
 * What reading a session file produces and reports: the issues a read finds, the errors that stop
 * it, how message bodies are loaded, and the sink a current file's entries go into as they are read.
 */
import type { BodyReader } from "./bodies.js";
import type { LineSource } from "./line-source.js";
import type { FileEntry, SessionEntry, SessionHeader } from "../format/entry-types.js";

export type LoadIssueKind =
  | "malformed-json"
  | "torn-tail"
  | "invalid-utf8"
  | "invalid-entry"
  | "duplicate-header"
  | "duplicate-id"
  | "unknown-type"
  | "glued-objects";

export interface LoadIssue {
  kind: LoadIssueKind;
  line: number;
  message: string;
  /** true when the line was left out of the session */
  skipped: boolean;
}

export type SessionFileErrorCode = "NOT_FOUND" | "NOT_A_FILE" | "EMPTY" | "BAD_HEADER" | "UNREADABLE";

/** A session file that cannot be opened at all. `message` is one line: path, line, reason. */
export class SessionFileError extends Error {
  constructor(
    readonly code: SessionFileErrorCode,
    readonly path: string,
    readonly reason: string,
    readonly line?: number,
  ) {
    super(`${path}${line ? `:${line}` : ""}: ${reason}`);
    this.name = "SessionFileError";
  }
}

export interface LoadedSession {
  header: SessionHeader;
  /** header first, then entries in file order (v1 entries have no ids until migrated) */
  fileEntries: FileEntry[];
  issues: LoadIssue[];
  /** false when the last byte is not a newline: the next append must start a new line */
  endsWithNewline: boolean;
  size: number;
  /** where an unterminated last line that could not be read (a torn write, or one still being written) starts */
  tornTailAt?: number;
  /** oh-my-pi's title slot, the line before the header, as read (format/title-slot.ts) */
  titleSlot?: { line: number; text: string };
}

/**
 * How entry bodies are loaded. v1/v2 files are always loaded eagerly: migration rewrites them.
 * - "eager": every entry parsed, validated and kept in memory.
 * - "parsed": every line parsed and validated at open; message and custom-message bodies are
 *   then dropped and read back from the file when used.
 * - "checked" (the default): message lines in the shape pi and bonsai write are checked to be
 *   well-formed JSON without being parsed, and indexed by the type, ids and role read off their
 *   start; each body is parsed and validated when first read. Every other line is parsed. A line
 *   that is not JSON is still reported and skipped at open; a message whose JSON is well formed
 *   but whose fields are wrong throws InvalidBodyError when it is read, and SessionManager then
 *   reads the file again as "parsed" (the line skipped and reported).
 * - "trusted": like "checked" without the well-formedness check, for files bonsai wrote itself.
 */
export type BodyLoading = "eager" | "parsed" | "checked" | "trusted";

/**
 * The calls of a decoded index, read one at a time in any order (open-index-codec.ts; kindOf, typeOf and roleOf in open-index.ts read `packed`): what lets
 * a sink take a replay whole and link each entry only when something reaches it (EntrySink.defer).
 */
export interface CallTable {
  readonly count: number;
  /** the types and roles `packed` points at (kindOf, typeOf, roleOf) */
  readonly names: readonly string[];
  packed(call: number): number;
  /** -1 for none, else where the parent's id is among idAt's: a deferred call's own below `count`, else one no deferred call has */
  parent(call: number): number;
  /** a deferred call's id (below `count`; "" for the other kinds), then the parent ids no deferred call has */
  idAt(at: number): string;
  line(call: number): number;
  offset(call: number): number;
  length(call: number): number;
}

/**
 * Where the entries of a current (v3) file go as they are read: the session layer's tree index
 * implements it, so storage reads into it without depending on it (docs/ARCHITECTURE.md, layers).
 */
export interface EntrySink {
  /**
   * adds a parsed entry, read from line `line` at byte `offset` for `length` bytes (where a
   * rewrite copies it from while it is unchanged); false when its id is already there
   */
  addIfNew(entry: SessionEntry, line?: number, offset?: number, length?: number): boolean;
  /** adds an entry whose body stays in the file at `offset`, `length` bytes; false on a duplicate id */
  addDeferred(type: string, id: string, parentId: string | null, role: string | undefined, line: number, offset: number, length: number): boolean;
  /** hands over the reader that fetches deferred bodies */
  attachBodies(bodies: BodyReader): void;
  /**
   * about `count` entries are coming (a replay knows): room for them is made once, not by
   * doubling; `distinct`: their ids are distinct, so none of them is refused as a duplicate
   */
  expect?(count: number, distinct?: boolean): void;
  /**
   * takes a replay of an open index whole, its calls all of distinct ids (open-index.ts): `entries`
   * are the parsed entries of its ENTRY calls, in order; false when it would rather have each call
   */
  defer?(calls: CallTable, entries: readonly SessionEntry[]): boolean;
  /** where the header's line is (a current file's only: an older one is migrated, every line rewritten) */
  headerAt?(line: number, offset: number, length: number): void;
  /** where oh-my-pi's title slot is, the line before the header (format/title-slot.ts), which a rewrite copies first */
  titleSlotAt?(line: number, offset: number, length: number, text: string): void;
  /** hands over where the lines are, so a rewrite copies the unchanged ones (line-source.ts) */
  attachLines?(lines: LineSource): void;
}
