/**
 * Pinning an entry, or unpinning it: every later compaction carries a pinned entry's text
 * verbatim beside its summary (format/pins.ts). One `bonsai.pin` custom entry is appended, only
 * when the state changes. The operation behind `bonsai pin`.
 */
import { PIN_CUSTOM_TYPE, type PinData, pinChange, pinnedIds } from "../format/pins.js";
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
    const change = pinChange(session.getBranch(), resolveEntryId(session, id), options.unpin === true);
    if (!change.ok) throw new Error(change.message);
    const { targetId: entryId, pinned } = change;
    if (!change.changed) return { id: entryId, pinned, changed: false, pinEntryId: null, pinnedIds: pinnedIds(session.getBranch()) };
    const data: PinData = { targetId: entryId, pinned };
    const pinEntryId = session.appendCustomEntry(PIN_CUSTOM_TYPE, data);
    await session.flush();
    return { id: entryId, pinned, changed: true, pinEntryId, pinnedIds: pinnedIds(session.getBranch()) };
  });
}
