/**
 * The open index's bytes (open-index-file.ts): built to be read back in a few milliseconds for a
 * session of 50,000 entries, which JSON of the same calls is not (parsing 50,000 small arrays
 * costs more than reading the session's lines). A short JSON head, then the calls as columns:
 *
 *   "bonsaiIx" · SHA-1 of everything after it · u32 head length · head JSON · padding to 8
 *   Float64 offset per call · Int32 ×4 per call (line, length, parent, kind | type << 4 | role << 16)
 *   Int32 length of each id (calls, then parent ids no call has) · the ids as one UTF-8 text
 *
 * A parent is -1 for none, else the index of its id in that list, so the ids are stored once.
 * Types and roles are small tables in the head. A torn or damaged index (the hash), or anything
 * that does not add up, decodes to undefined.
 */
import { createHash } from "node:crypto";
import type { CallTable } from "./load-types.js";
import { type CallColumns, type CallSource, type CallVisitor, DEFERRED, kindOf, roleOf, typeOf } from "./open-index.js";

const MAGIC = "bonsaiIx";
const SUM_BYTES = 20;
const NONE = -1;

/** Everything but the calls: what the index says about the file and the read. */
export type IndexHead = Record<string, unknown>;

/** Types and roles fit 12 and 16 bits of a packed field. */
const MAX_NAMES = 0xfff;

/** The index's bytes: `head` (JSON-able) and the calls; undefined for calls with more distinct types and roles than it packs. */
export function encodeIndex(head: IndexHead, calls: CallColumns): Buffer | undefined {
  const n = calls.length;
  const { packed, ids, parents, names } = calls;
  if (names.length > MAX_NAMES) return undefined;
  const deferred = (i: number) => kindOf(packed[i]) === DEFERRED;
  // most parents are the call just before: the map of every id is made only for the others
  let withId: Map<string, number> | undefined;
  const extras = new Map<string, number>();
  const parentOf = (i: number, parentId: string | null): number => {
    if (parentId === null) return NONE;
    if (i > 0 && deferred(i - 1) && ids[i - 1] === parentId) return i - 1;
    if (!withId) {
      withId = new Map();
      for (let j = 0; j < n; j++) if (deferred(j)) withId.set(ids[j], j);
    }
    const own = withId.get(parentId);
    if (own !== undefined) return own;
    let extra = extras.get(parentId);
    if (extra === undefined) {
      extra = n + extras.size;
      extras.set(parentId, extra);
    }
    return extra;
  };
  const fields = new Int32Array(4 * n);
  let idString = "";
  for (let i = 0; i < n; i++) {
    fields[4 * i] = calls.lines[i];
    fields[4 * i + 1] = calls.lengths[i];
    fields[4 * i + 2] = deferred(i) ? parentOf(i, parents[i]) : NONE;
    fields[4 * i + 3] = packed[i];
    if (deferred(i)) idString += ids[i];
  }
  const extraIds = [...extras.keys()];
  const idLengths = new Int32Array(n + extraIds.length);
  for (let i = 0; i < n; i++) if (deferred(i)) idLengths[i] = ids[i].length;
  extraIds.forEach((id, j) => {
    idLengths[n + j] = id.length;
  });
  const idText = Buffer.from(idString + extraIds.join(""), "utf8");
  const offsetColumn = calls.offsets.subarray(0, n);
  const headBytes = Buffer.from(JSON.stringify({ ...head, calls: n, extras: extras.size, names, idBytes: idText.length }), "utf8");
  const headAt = MAGIC.length + SUM_BYTES;
  const columnsAt = align8(headAt + 4 + headBytes.length);
  const out = Buffer.alloc(columnsAt + offsetColumn.byteLength + fields.byteLength + idLengths.byteLength + idText.length);
  out.write(MAGIC, 0, "latin1");
  out.writeUInt32LE(headBytes.length, headAt);
  headBytes.copy(out, headAt + 4);
  let at = columnsAt;
  for (const column of [offsetColumn, fields, idLengths]) {
    Buffer.from(column.buffer, column.byteOffset, column.byteLength).copy(out, at);
    at += column.byteLength;
  }
  idText.copy(out, at);
  createHash("sha1").update(out.subarray(headAt)).digest().copy(out, MAGIC.length);
  return out;
}

const align8 = (n: number) => (n + 7) & ~7;

/**
 * The head and the calls of an index's bytes (a source that reads them from the columns without
 * building a list), or undefined when they are not an index this code wrote.
 */
export function decodeIndex(data: Buffer): { head: IndexHead; calls: CallSource } | undefined {
  const headAt = MAGIC.length + SUM_BYTES;
  if (data.length < headAt + 4 || data.toString("latin1", 0, MAGIC.length) !== MAGIC) return undefined;
  if (!createHash("sha1").update(data.subarray(headAt)).digest().equals(data.subarray(MAGIC.length, headAt))) return undefined;
  const headLength = data.readUInt32LE(headAt);
  let head: IndexHead & { calls?: unknown; extras?: unknown; names?: unknown; idBytes?: unknown };
  try {
    head = JSON.parse(data.toString("utf8", headAt + 4, headAt + 4 + headLength));
  } catch {
    return undefined;
  }
  const { calls: n, extras, names, idBytes } = head;
  if (!isCount(n) || !isCount(extras) || !isCount(idBytes) || !Array.isArray(names) || !names.every((name) => typeof name === "string")) return undefined;
  const columnsAt = align8(headAt + 4 + headLength);
  const idCount = n + extras;
  if (data.length !== columnsAt + 8 * n + 16 * n + 4 * idCount + idBytes) return undefined;
  // typed arrays need aligned memory: copy the columns out once
  const columns = new ArrayBuffer(8 * n + 16 * n + 4 * idCount);
  data.copy(new Uint8Array(columns), 0, columnsAt, columnsAt + columns.byteLength);
  const offsets = new Float64Array(columns, 0, n);
  const fields = new Int32Array(columns, 8 * n, 4 * n);
  const idLengths = new Int32Array(columns, 24 * n, idCount);
  const idText = data.toString("utf8", columnsAt + columns.byteLength);
  // where each id starts in idText, checked to add up before any is used
  const idStarts = new Int32Array(idCount + 1);
  for (let i = 0; i < idCount; i++) {
    if (idLengths[i] < 0) return undefined;
    idStarts[i + 1] = idStarts[i] + idLengths[i];
  }
  if (idStarts[idCount] !== idText.length) return undefined;
  for (let i = 0; i < n; i++) {
    const packed = fields[4 * i + 3];
    const kind = kindOf(packed);
    const parent = fields[4 * i + 2];
    if (!Number.isSafeInteger(offsets[i]) || offsets[i] < 0 || fields[4 * i + 1] < 0 || parent < NONE || parent >= idCount) return undefined;
    if (kind === DEFERRED ? typeOf(packed, names) === undefined || roleOf(packed, names) === undefined : kind > 3) return undefined;
  }
  const idAt = (i: number) => idText.slice(idStarts[i], idStarts[i + 1]);
  const source = (visit: CallVisitor, rangesOnly?: boolean) => {
    // the id just made for a call, so a parent that is the call before costs no second string
    let lastAt = -1;
    let last = "";
    for (let i = 0; i < n; i++) {
      const packed = fields[4 * i + 3];
      const kind = kindOf(packed);
      if (kind !== DEFERRED) {
        visit(kind, "", "", null, null, fields[4 * i], offsets[i], fields[4 * i + 1]);
        continue;
      }
      if (rangesOnly) continue;
      const parent = fields[4 * i + 2];
      const parentId = parent === NONE ? null : parent === lastAt ? last : idAt(parent);
      last = idAt(i);
      lastAt = i;
      // checked above: both are in `names`
      visit(DEFERRED, typeOf(packed, names)!, last, parentId, roleOf(packed, names)!, fields[4 * i], offsets[i], fields[4 * i + 1]);
    }
  };
  const table: CallTable = {
    count: n,
    names,
    packed: (i) => fields[4 * i + 3],
    parent: (i) => fields[4 * i + 2],
    idAt,
    line: (i) => fields[4 * i],
    offset: (i) => offsets[i],
    length: (i) => fields[4 * i + 1],
  };
  return { head, calls: Object.assign(source, { count: n, table }) };
}

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
