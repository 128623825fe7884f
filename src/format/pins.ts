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

export type PinChange = { ok: true; targetId: string; pinned: boolean; changed: boolean } | { ok: false; message: string };

/**
 * What pinning (or unpinning) `id` on `branch` means: the entry (an id or a unique prefix of one
 * on the branch; without an id, the user's latest message, or for unpin the latest pinned entry),
 * and whether its state changes. A refusal says why in one line. Shared by `bonsai pin`, the
 * chat's `/pin` and pi-bonsai's.
 */
export function pinChange(branch: readonly SessionEntry[], id: string | undefined, unpin: boolean): PinChange {
  const pinned = new Set(pinnedIds(branch));
  let target: SessionEntry | undefined;
  if (id === undefined) {
    target = branch.findLast((e) => (unpin ? pinned.has(e.id) : e.type === "message" && e.message.role === "user"));
    if (!target) return { ok: false, message: unpin ? "Nothing is pinned on this branch." : "Nothing to pin yet: send a message first." };
  } else {
    const matches = branch.filter((e) => e.id === id || e.id.startsWith(id));
    target = matches.find((e) => e.id === id) ?? (matches.length === 1 ? matches[0] : undefined);
    if (!target) return { ok: false, message: matches.length > 1 ? `${id} names ${matches.length} entries on the branch; give more of the id` : `${id} is not on the current branch` };
  }
  if (!unpin && entryText(target).trim() === "") return { ok: false, message: `${target.id} is a ${target.type} entry with no text to carry; pin a message` };
  return { ok: true, targetId: target.id, pinned: !unpin, changed: pinned.has(target.id) === unpin };
}

/** The one line that says what a pin or unpin did. */
export function pinNotice(targetId: string, pinned: boolean, changed: boolean): string {
  const what = changed ? (pinned ? "Pinned" : "Unpinned") : pinned ? "Already pinned:" : "Not pinned:";
  return `${what} ${targetId}.${pinned ? " Every later compaction carries it verbatim." : ""}`;
}
