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

/** The state of each pinned or unpinned target on `path`: the newest pin entry for it decides. */
function pinStates(path: readonly SessionEntry[]): Map<string, boolean> {
  const state = new Map<string, boolean>();
  for (const entry of path) {
    const pin = pinOf(entry);
    if (pin) state.set(pin.targetId, pin.pinned);
  }
  return state;
}

/** The ids pinned on `path`, in path order of the pinned entries. */
export function pinnedIds(path: readonly SessionEntry[]): string[] {
  const state = pinStates(path);
  return path.filter((e) => state.get(e.id) === true).map((e) => e.id);
}

/**
 * The pinned entries from index `from` (where the context starts: after a reset boundary, which
 * clears pins with everything else) to before `end` of the path, with their text: what a
 * compaction there carries. `firstRequest`: the first user message from `from` on counts as
 * pinned too (compaction.pinFirstRequest), unless a pin entry unpinned it. A function `from` is
 * called only when something may be pinned: finding where the context starts takes a walk.
 */
export function pinnedBefore(
  path: readonly SessionEntry[],
  end: number,
  firstRequest = false,
  from: number | (() => number) = 0,
): { entryId: string; text: string }[] {
  const state = pinStates(path);
  if (!firstRequest && ![...state.values()].includes(true)) return [];
  const span = path.slice(typeof from === "function" ? from() : from, end);
  const ids = new Set(span.filter((e) => state.get(e.id) === true).map((e) => e.id));
  const first = firstRequest ? span.find((e) => e.type === "message" && e.message.role === "user") : undefined;
  if (first && state.get(first.id) !== false) ids.add(first.id);
  return span
    .filter((e) => ids.has(e.id))
    .map((e) => ({ entryId: e.id, text: entryText(e) }))
    .filter((p) => p.text.trim() !== "");
}
