/** Setting or clearing the label of an entry. The operation behind `bonsai label`. */
import { resolveEntryId } from "./entry-id.js";
import { openWithStableIds, type SessionTarget, type WarningListener, withSession } from "./open-session.js";

export interface LabelResult {
  id: string;
  label: string | null;
  previous: string | null;
  /** false when the entry already had this label (or had none to clear): nothing was written */
  changed: boolean;
  /** the label entry appended, when one was */
  labelEntryId: string | null;
}

/**
 * Labels entry `id` (a unique prefix will do) with `label`, or clears its label when `label` is
 * undefined or blank. Appends one label entry only if the label changes. A location is opened for
 * writing (taking the lock) and closed; older formats are refused rather than migrated behind the
 * user's back. A SessionManager is used as it is and left open.
 */
export async function setLabel(
  target: SessionTarget,
  id: string,
  label: string | undefined,
  options: { onWarning?: WarningListener } = {},
): Promise<LabelResult> {
  const opened = await openWithStableIds(target, { purpose: "to label", onWarning: options.onWarning });
  const { session } = opened;
  return withSession(opened, async () => {
    const entryId = resolveEntryId(session, id);
    const previous = session.getLabel(entryId) ?? null;
    const next = label?.trim() ? label.trim() : null;
    if (previous === next) return { id: entryId, label: next, previous, changed: false, labelEntryId: null };
    const labelEntryId = session.appendLabelChange(entryId, next ?? undefined);
    await session.flush();
    return { id: entryId, label: next, previous, changed: true, labelEntryId };
  });
}
