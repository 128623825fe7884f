/**
 * Pinning an entry, or unpinning it: every later compaction carries a pinned entry's text
 * verbatim beside its summary (format/pins.ts). One `bonsai.pin` custom entry is appended, only
 * when the state changes. The operation behind `bonsai pin`.
 */
import { entryText } from "../format/entry-messages.js";
import { PIN_CUSTOM_TYPE, type PinData, pinnedIds } from "../format/pins.js";
import { resolveEntryId } from "./entry-id.js";
import { openWithStableIds, type SessionTarget, type WarningListener, withSession } from "./open-session.js";

export interface PinResult {
  id: string;
  pinned: boolean;
  /** false when the entry already was in that state: nothing was written */
  changed: boolean;
  /** the pin entry appended, when one was */
  pinEntryId: string | null;
  /** every entry pinned on the branch now */
  pinnedIds: string[];
}

export async function pinEntry(
  target: SessionTarget,
  id: string,
  options: { unpin?: boolean; onWarning?: WarningListener } = {},
): Promise<PinResult> {
  const opened = await openWithStableIds(target, { purpose: options.unpin ? "to unpin" : "to pin", onWarning: options.onWarning });
  const { session } = opened;
  return withSession(opened, async () => {
    const entryId = resolveEntryId(session, id);
    const entry = session.getEntry(entryId);
    const pinned = !options.unpin;
    if (pinned && entry && entryText(entry).trim() === "") throw new Error(`${entryId} is a ${entry.type} entry with no text to carry; pin a message`);
    const branch = session.getBranch();
    if (!branch.some((e) => e.id === entryId)) throw new Error(`${entryId} is not on the current branch`);
    const now = pinnedIds(branch);
    if (now.includes(entryId) === pinned) return { id: entryId, pinned, changed: false, pinEntryId: null, pinnedIds: now };
    const data: PinData = { targetId: entryId, pinned };
    const pinEntryId = session.appendCustomEntry(PIN_CUSTOM_TYPE, data);
    await session.flush();
    return { id: entryId, pinned, changed: true, pinEntryId, pinnedIds: pinnedIds(session.getBranch()) };
  });
}
