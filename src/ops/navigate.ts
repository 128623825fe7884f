/**
 * Tree navigation without an agent: move the leaf of a session to another entry,
 * optionally leaving a summary of the branch being abandoned at the destination. The
 * AgentSession wraps this and adds its events; the `beforeTree` hook is the seam where
 * extensions cancel the move or supply their own summary.
 */
import {
  collectEntriesForBranchSummary,
  DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS,
  generateBranchSummary,
} from "../compaction/branch-summary.js";
import type { Summarizer } from "../summarizer/types.js";
import { joinTextBlocks } from "../messages/text-blocks.js";
import type { SessionManager } from "../session/manager.js";
import type { BranchSummaryEntry, FileLists, SessionEntry } from "../format/entry-types.js";

/** What is about to happen, as a hook sees it. */
export interface TreePreparation {
  targetId: string;
  oldLeafId: string | null;
  commonAncestorId: string | null;
  /** the abandoned entries, oldest first */
  entriesToSummarize: SessionEntry[];
  userWantsSummary: boolean;
  customInstructions?: string;
  replaceInstructions?: boolean;
}

/** A hook's answer. Everything is optional; returning nothing lets the navigation proceed. */
export interface BeforeTreeResult {
  /** stop here: the session is left as it was */
  cancel?: boolean;
  /** use this summary instead of asking the summarizer (only when a summary was asked for) */
  summary?: { summary: string; details?: unknown };
  customInstructions?: string;
  replaceInstructions?: boolean;
}

export interface NavigateTreeHooks {
  beforeTree?(preparation: TreePreparation, signal: AbortSignal): BeforeTreeResult | undefined | Promise<BeforeTreeResult | undefined>;
}

export interface NavigateTreeOptions {
  /** leave a summary of the abandoned branch at the destination */
  summarize?: boolean;
  /** appended to the branch prompt as "Additional focus" (or replacing it: `replaceInstructions`) */
  customInstructions?: string;
  replaceInstructions?: boolean;
  /** needed when `summarize` is set and no hook supplies the summary */
  summarizer?: Summarizer;
  /** aborting it cancels the navigation, and leaves the session untouched */
  signal?: AbortSignal;
  /** `branchSummary.reserveTokens` (default 16384) */
  reserveTokens?: number;
  hooks?: NavigateTreeHooks;
}

export interface NavigateTreeResult {
  /** the text of a user or custom message target, for the user to edit and send again */
  editorText?: string;
  cancelled: boolean;
  /** the summary was aborted through the signal */
  aborted?: boolean;
  /** the branch_summary entry that now is the leaf */
  summaryEntry?: BranchSummaryEntry;
  /** whether the summary came from a hook (set only when there is a summary) */
  fromExtension?: boolean;
  /** the leaf after the move (unchanged when cancelled) */
  newLeafId: string | null;
  oldLeafId: string | null;
}

/**
 * Where the leaf goes for a target, and what goes back into the editor. A user or custom
 * message is re-opened for editing: the leaf moves to its parent, so re-sending it makes a
 * sibling. Any other entry becomes the leaf itself.
 */
export function destinationOf(target: SessionEntry): { leafId: string | null; editorText?: string } {
  if (target.type === "message" && target.message.role === "user") {
    return { leafId: target.parentId, editorText: joinTextBlocks(target.message.content, "") };
  }
  if (target.type === "custom_message") return { leafId: target.parentId, editorText: joinTextBlocks(target.content, "") };
  return { leafId: target.id };
}

/**
 * Moves the leaf of `session` to `targetId` (as AgentSession.navigateTree does, without an agent). With a summary, the
 * branch_summary entry hangs off the new leaf and becomes the leaf. Without one, a persisted
 * session records the move (a `bonsai.checkout` entry, docs/ARCHITECTURE.md storage decisions) so a reload finds
 * the leaf where it was left; an in-memory session just moves it. Throws for an unknown target,
 * a missing summarizer, or a summarizer error; an abort returns `{cancelled: true, aborted: true}`.
 */
export async function navigateTree(
  session: SessionManager,
  targetId: string,
  options: NavigateTreeOptions = {},
): Promise<NavigateTreeResult> {
  const oldLeafId = session.getLeafId();
  const unchanged = { newLeafId: oldLeafId, oldLeafId };
  if (targetId === oldLeafId) return { cancelled: false, ...unchanged };
  const target = session.getEntry(targetId);
  if (!target) throw new Error(`Entry ${targetId} not found`);

  const summarize = options.summarize ?? false;
  const { entries, commonAncestorId } = collectEntriesForBranchSummary(session, oldLeafId, targetId, session.getDialect());
  let customInstructions = options.customInstructions;
  let replaceInstructions = options.replaceInstructions;
  const preparation: TreePreparation = {
    targetId,
    oldLeafId,
    commonAncestorId,
    entriesToSummarize: entries,
    userWantsSummary: summarize,
    customInstructions,
    replaceInstructions,
  };
  // Hooks get a signal even when the caller passed none, so they can always be told to stop.
  const signal = options.signal ?? new AbortController().signal;
  const aborted = (): NavigateTreeResult => ({ cancelled: true, aborted: true, ...unchanged });

  let hookSummary: BeforeTreeResult["summary"];
  if (options.hooks?.beforeTree) {
    const result = await options.hooks.beforeTree(preparation, signal);
    if (result?.cancel) return { cancelled: true, ...unchanged };
    if (result?.summary && summarize) hookSummary = result.summary;
    if (result?.customInstructions !== undefined) customInstructions = result.customInstructions;
    if (result?.replaceInstructions !== undefined) replaceInstructions = result.replaceInstructions;
  }
  if (signal.aborted) return aborted();

  let summaryText: string | undefined;
  let details: unknown;
  if (hookSummary) {
    summaryText = hookSummary.summary;
    details = hookSummary.details;
  } else if (summarize && entries.length > 0) {
    if (!options.summarizer) throw new Error("No summarizer available for the branch summary: pass options.summarizer");
    const result = await generateBranchSummary(entries, {
      summarizer: options.summarizer,
      signal,
      customInstructions,
      replaceInstructions,
      reserveTokens: options.reserveTokens ?? DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS,
    });
    if (result.aborted) return aborted();
    if (result.error !== undefined) throw new Error(`Branch summary failed: ${result.error}`);
    summaryText = result.summary;
    details = { readFiles: result.readFiles ?? [], modifiedFiles: result.modifiedFiles ?? [] } satisfies FileLists;
  }
  if (signal.aborted) return aborted();

  const destination = destinationOf(target);
  const editor = destination.editorText !== undefined ? { editorText: destination.editorText } : {};
  if (summaryText) {
    const fromExtension = hookSummary !== undefined;
    const id = session.branchWithSummary(destination.leafId, summaryText, details, fromExtension);
    const summaryEntry = session.getEntry(id) as BranchSummaryEntry;
    return { ...editor, cancelled: false, summaryEntry, fromExtension, newLeafId: session.getLeafId(), oldLeafId };
  }
  if (session.isPersisted()) session.checkout(destination.leafId);
  else if (destination.leafId === null) session.resetLeaf();
  else session.branch(destination.leafId);
  return { ...editor, cancelled: false, newLeafId: session.getLeafId(), oldLeafId };
}
