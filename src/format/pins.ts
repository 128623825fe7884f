/**
 * Pins: entries a user or program asked every later compaction to carry verbatim. A pin is a
 * custom entry (`bonsai.pin`, data `{targetId, pinned}`), which pi and oh-my-pi keep in the tree
 * and leave out of the model's context, so the file stays theirs to read; the newest one for a
 * target on the path decides. What a pinned entry says is its message text. Pure functions.
 */
import type { SessionEntry } from "./entry-types.js";
import { entryText } from "./entry-messages.js";

export const PIN_CUSTOM_TYPE = "bonsai.pin";

export interface PinData {
  targetId: string;
  pinned: boolean;
}

const pinOf = (entry: SessionEntry): PinData | undefined => {
  if (entry.type !== "custom" || entry.customType !== PIN_CUSTOM_TYPE) return undefined;
  const data = entry.data as Partial<PinData> | undefined;
  return typeof data?.targetId === "string" && typeof data.pinned === "boolean" ? { targetId: data.targetId, pinned: data.pinned } : undefined;
};

/** The ids pinned on `path`, in path order of the pinned entries. */
export function pinnedIds(path: readonly SessionEntry[]): string[] {
  const state = new Map<string, boolean>();
  for (const entry of path) {
    const pin = pinOf(entry);
    if (pin) state.set(pin.targetId, pin.pinned);
  }
  return path.filter((e) => state.get(e.id) === true).map((e) => e.id);
}

/** Whether a pin entry on the path unpinned `id` last. */
function unpinned(path: readonly SessionEntry[], id: string): boolean {
  let state: boolean | undefined;
  for (const entry of path) {
    const pin = pinOf(entry);
    if (pin?.targetId === id) state = pin.pinned;
  }
  return state === false;
}

/** What a pinned entry says: the text of its message (format/entry-messages.ts). */
export const pinnedText = (entry: SessionEntry): string => entryText(entry);

/**
 * The pinned entries from index `from` (where the context starts: after a reset boundary, which
 * clears pins with everything else) to before `end` of the path, with their text: what a
 * compaction there carries. `firstRequest`: the first user message from `from` on counts as
 * pinned too (compaction.pinFirstRequest), unless a pin entry unpinned it.
 */
export function pinnedBefore(path: readonly SessionEntry[], end: number, firstRequest = false, from = 0): { entryId: string; text: string }[] {
  const ids = new Set(pinnedIds(path));
  const span = path.slice(from, end);
  const first = firstRequest ? span.find((e) => e.type === "message" && e.message.role === "user") : undefined;
  if (first && !unpinned(path, first.id)) ids.add(first.id);
  return span
    .filter((e) => ids.has(e.id))
    .map((e) => ({ entryId: e.id, text: pinnedText(e) }))
    .filter((p) => p.text.trim() !== "");
}
