/**
 * Undoing a compaction without rewriting anything: a new branch from the entry before the
 * compaction, with copies of the entries written since the compaction, and the leaf moved to its
 * end. The compacted branch stays in the tree (pi, oh-my-pi and the viewer show both); checking
 * out its last entry brings the compaction back. A branch summary (left by a move in the tree)
 * is undone the same way: the context is then the place moved to without the summary of the
 * branch left, plus what came after. The operation behind `bonsai uncompact`.
 */
import type { SessionEntry } from "../format/entry-types.js";
import type { SessionManager } from "../session/manager.js";
import { resolveEntryId } from "./entry-id.js";
import { openWithStableIds, type SessionTarget, type WarningListener, withSession } from "./open-session.js";

/** The summaries that can be undone. */
export type UndoneSummary = "compaction" | "branch_summary";

export interface UncompactResult {
  /** the compaction (or branch summary) undone */
  compactionId: string;
  /** which of the two it was */
  type: UndoneSummary;
  /** the entry before it, where the new branch starts */
  branchFromId: string | null;
  /** the entries written since the compaction, copied onto the new branch, as [original, copy] */
  copied: [string, string][];
  /** entries after the compaction that were not copied, with why */
  skipped: { id: string; type: string; reason: string }[];
  /** the leaf before, and after (the last copy, or the entry before the compaction) */
  oldLeafId: string | null;
  newLeafId: string | null;
  /** false with dryRun: nothing was written */
  changed: boolean;
}

export interface UncompactOptions {
  /** the compaction or branch summary to undo (a unique prefix will do); default: the latest `type` on the current branch */
  compactionId?: string;
  /** without an id, which summary to undo: the latest compaction (default) or branch summary */
  type?: UndoneSummary;
  dryRun?: boolean;
  onWarning?: WarningListener;
}

/**
 * Why an entry after the compaction is not copied, or undefined when it is: a label or a context
 * edit names an entry by id (the copy would name the original, on the branch being left), and a
 * checkout marker only records where a leaf was.
 */
function notCopied(entry: SessionEntry): string | undefined {
  if (entry.type === "label") return "labels an entry by id";
  if (entry.type === "context_edit") return "edits an entry by id";
  if (entry.type === "custom" && entry.customType === "bonsai.checkout") return "only records a moved leaf";
  return undefined;
}

const NAMES: Record<UndoneSummary, string> = { compaction: "compaction", branch_summary: "branch summary" };

/** How a summary kind reads in a sentence: "compaction", "branch summary". */
export const summaryName = (type: UndoneSummary): string => NAMES[type];

/** The plan for a session's current branch: which summary, from where, what is copied. */
export function planUncompact(session: SessionManager, compactionId?: string, type: UndoneSummary = "compaction") {
  const path = session.getBranch();
  const at = compactionId === undefined ? path.findLastIndex((e) => e.type === type) : path.findIndex((e) => e.id === compactionId);
  if (at < 0) {
    const where = session.getSessionFile() ?? "(in memory)";
    throw new Error(compactionId === undefined ? `${where}: no ${NAMES[type]} on the current branch: nothing to undo` : `${where}: ${compactionId} is not on the current branch`);
  }
  const compaction = path[at];
  if (compaction.type !== "compaction" && compaction.type !== "branch_summary") {
    throw new Error(`${compaction.id} is a ${compaction.type} entry, not a compaction or a branch summary`);
  }
  const after = path.slice(at + 1);
  return {
    compaction,
    copy: after.filter((e) => notCopied(e) === undefined),
    skipped: after.flatMap((e) => {
      const reason = notCopied(e);
      return reason ? [{ id: e.id, type: e.type, reason }] : [];
    }),
  };
}

export async function uncompactSession(target: SessionTarget, options: UncompactOptions = {}): Promise<UncompactResult> {
  const opened = await openWithStableIds(target, { purpose: `to undo a ${NAMES[options.type ?? "compaction"]}`, onWarning: options.onWarning });
  const { session } = opened;
  return withSession(opened, async () => {
    const wanted = options.compactionId === undefined ? undefined : resolveEntryId(session, options.compactionId);
    const { compaction, copy, skipped } = planUncompact(session, wanted, options.type);
    const oldLeafId = session.getLeafId();
    const result: UncompactResult = {
      compactionId: compaction.id,
      type: compaction.type,
      branchFromId: compaction.parentId,
      copied: [],
      skipped,
      oldLeafId,
      newLeafId: copy.length > 0 ? null : compaction.parentId,
      changed: !options.dryRun,
    };
    if (options.dryRun) {
      result.copied = copy.map((e) => [e.id, ""]);
      return result;
    }
    const moveLeaf = (id: string | null) => (id === null ? session.resetLeaf() : session.branch(id));
    moveLeaf(compaction.parentId);
    try {
      // one write: a full disk leaves no copy, so the file's leaf is never a partial branch
      const copies = session.appendCopies(copy);
      result.copied = copy.map((entry, i) => [entry.id, copies[i]]);
      // with nothing to copy the move itself is what is written
      if (copy.length === 0) session.persistLeaf();
    } catch (error) {
      moveLeaf(oldLeafId); // what closing the session persists: the leaf it had, not the branch point
      throw error;
    }
    result.newLeafId = session.getLeafId();
    await session.flush();
    return result;
  });
}
