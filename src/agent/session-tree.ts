/**
 * AgentSession's moves in the session tree: navigation with the tree hooks, optionally
 * summarizing the branch being left, and branching before a user message so it can be edited
 * and sent again (docs/ARCHITECTURE.md, tree navigation). A move happens only when the agent
 * is idle, and the agent's context follows the new leaf at once.
 */
import type { Settings } from "../config/settings.js";
import type { SessionManager } from "../session/manager.js";
import { destinationOf, type NavigateTreeResult, navigateTree } from "../ops/navigate.js";
import type { Summarizer } from "../summarizer/types.js";
import { AbortSlot } from "./abort-slot.js";
import type { AgentContext } from "./agent-context.js";
import type { SessionHookEvents } from "./events.js";
import type { HookRunner } from "./hooks.js";
import type { SummarizerSource } from "./summarizer-source.js";

export interface TreeMoveOptions {
  summarize?: boolean;
  customInstructions?: string;
  replaceInstructions?: boolean;
}

/** navigateTree with session_before_tree as its seam and session_tree after a move. */
export async function navigateWithHooks(
  session: SessionManager,
  hooks: HookRunner<SessionHookEvents>,
  targetId: string,
  options: TreeMoveOptions & {
    summarizer: () => Promise<Summarizer>;
    signal: AbortSignal;
    reserveTokens: number;
    onMoved: () => void;
  },
): Promise<NavigateTreeResult> {
  const { summarizer, onMoved, ...rest } = options;
  const result = await navigateTree(session, targetId, {
    ...rest,
    summarizer: options.summarize ? await summarizer() : undefined,
    hooks: {
      beforeTree: (preparation, signal) =>
        hooks.hasHandlers("session_before_tree") ? hooks.run("session_before_tree", { preparation }, signal) : undefined,
    },
  });
  if (!result.cancelled && result.newLeafId !== result.oldLeafId) {
    onMoved();
    await hooks.run("session_tree", {
      newLeafId: result.newLeafId,
      oldLeafId: result.oldLeafId,
      ...(result.summaryEntry ? { summaryEntry: result.summaryEntry, fromExtension: result.fromExtension } : {}),
    });
  }
  return result;
}

/**
 * Forks before a user message so it can be edited and sent again: the path up to its parent
 * becomes a new session file (createBranchedSession). The first message has no path to copy:
 * the leaf moves before it instead, in the same file. Returns the message's text.
 */
export function branchBefore(session: SessionManager, entryId: string): string {
  const entry = session.getEntry(entryId);
  if (entry?.type !== "message" || entry.message.role !== "user") {
    throw new Error(`Entry ${entryId} is not a user message: branch from a user message`);
  }
  const selectedText = destinationOf(entry).editorText ?? "";
  if (entry.parentId === null) session.checkout(null);
  else session.createBranchedSession(entry.parentId);
  return selectedText;
}

export interface TreeMovesOptions {
  sessionManager: SessionManager;
  hooks: HookRunner<SessionHookEvents>;
  context: AgentContext;
  summarizers: SummarizerSource;
  settings: Settings;
  /** resolves once the agent is idle; throws while it answers */
  waitUntilIdle: () => Promise<void>;
}

/** The tree moves of one AgentSession, with the branch summary of the move in progress. */
export class TreeMoves {
  private readonly summary = new AbortSlot();

  constructor(private readonly options: TreeMovesOptions) {}

  async navigate(targetId: string, options: TreeMoveOptions = {}): Promise<NavigateTreeResult> {
    const { sessionManager, hooks, context, summarizers, settings } = this.options;
    await this.options.waitUntilIdle();
    return this.summary.run((signal) =>
      navigateWithHooks(sessionManager, hooks, targetId, {
        ...options,
        summarizer: () => summarizers.forBranch(context.model),
        signal,
        reserveTokens: settings.branchSummary.reserveTokens,
        onMoved: () => context.refresh(),
      }),
    );
  }

  async branch(entryId: string): Promise<{ selectedText: string; cancelled: boolean }> {
    await this.options.waitUntilIdle();
    const selectedText = branchBefore(this.options.sessionManager, entryId);
    this.options.context.refresh();
    return { selectedText, cancelled: false };
  }

  abortSummary(): void {
    this.summary.abort();
  }
}
