/**
 * oh-my-pi 18's title slot: every session file omp writes opens with one fixed-width line before
 * the session header, `{"type":"title","v":1,"title":…,"updatedAt":…,"pad":"   "}` padded with
 * spaces to exactly 256 bytes with its newline (omp 18.2.3, src/session/session-title-slot.ts).
 * omp renames a session by overwriting those 256 bytes in place, so the line must stay at offset 0
 * with its length unchanged: bonsai copies it byte for byte through every rewrite, copy and store,
 * reads the title off it for `ls`, and writes it only to rename the session (`retitledSlot`),
 * since omp takes the title from the slot over the header's.
 */

export const TITLE_SLOT_TYPE = "title";

/** The slot's size on disk, newline included: what omp overwrites in place. */
export const TITLE_SLOT_BYTES = 256;

export interface TitleSlot {
  type: typeof TITLE_SLOT_TYPE;
  v?: unknown;
  title?: unknown;
  [field: string]: unknown;
}

/**
 * Whether the first line of a file, parsed, is a title slot. Only the type decides, so a slot of
 * a later version (another `v`, other fields, another width) is still carried rather than refused.
 */
export function isTitleSlot(value: unknown): value is TitleSlot {
  return typeof value === "object" && value !== null && !Array.isArray(value) && (value as { type?: unknown }).type === TITLE_SLOT_TYPE;
}

/** The session name a slot holds, if any (omp leaves it empty until the session is titled). */
export function slotTitle(slot: TitleSlot): string | undefined {
  return typeof slot.title === "string" && slot.title.trim() !== "" ? slot.title.trim() : undefined;
}

/** The title slot among stored lines, parsed: only the first line can be one. */
export function titleSlotOfLines(lines: readonly string[]): TitleSlot | undefined {
  const first = lines[0];
  if (first === undefined || !first.includes(`"${TITLE_SLOT_TYPE}"`)) return undefined;
  try {
    const value: unknown = JSON.parse(first);
    return isTitleSlot(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Where the header is among stored lines: after the title slot when there is one. */
export const headerLineIndex = (lines: readonly string[]): number => (titleSlotOfLines(lines) ? 1 : 0);

const lineBytes = (line: string) => Buffer.byteLength(line, "utf8") + 1;

/**
 * The title slot `line` renamed to `title` (set by the user, at `updatedAt`), as omp writes one:
 * the same 256 bytes with the newline, padded with spaces, the title cut to whole characters when
 * it does not fit. Undefined when `line` is not a slot of exactly that size (another version's
 * slot is carried, never rewritten).
 */
export function retitledSlot(line: string, title: string, updatedAt: string): string | undefined {
  const slot = titleSlotOfLines([line]);
  if (!slot || lineBytes(line) !== TITLE_SLOT_BYTES || slot.v !== 1) return undefined;
  const make = (text: string, pad: string) => JSON.stringify({ type: TITLE_SLOT_TYPE, v: 1, title: text, source: "user", updatedAt, pad });
  const chars = [...title];
  // a character takes a byte at least: more than the slot's bytes cannot fit
  let kept = Math.min(chars.length, TITLE_SLOT_BYTES);
  while (kept > 0 && lineBytes(make(chars.slice(0, kept).join(""), "")) > TITLE_SLOT_BYTES) kept--;
  const text = chars.slice(0, kept).join("");
  const room = TITLE_SLOT_BYTES - lineBytes(make(text, ""));
  if (room < 0) return undefined;
  const renamed = make(text, " ".repeat(room));
  return lineBytes(renamed) === TITLE_SLOT_BYTES ? renamed : undefined;
}
