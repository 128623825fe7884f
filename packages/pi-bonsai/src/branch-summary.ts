/**
 * pi's `session_before_tree`, answered by bonsai when the user asked for a summary of the branch
 * they leave: bonsai's branch-summary rules (src/compaction/branch-summary.ts) with the summarizer
 * of bonsai's settings, and the extractive summary when that one fails.
 */
import type { ExtensionContext, SessionBeforeTreeEvent } from "@mariozechner/pi-coding-agent";
import { generateBranchSummary } from "../../../src/compaction/branch-summary.js";
import type { Settings } from "../../../src/config/settings.js";
import type { SessionEntry } from "../../../src/format/entry-types.js";
import { extractiveSummarizer } from "../../../src/summarizer/extractive.js";
import type { Summarizer } from "../../../src/summarizer/types.js";
import { summarizerSource } from "./summarizers.js";

/** What a `session_before_tree` handler may return (pi does not export the type). */
export interface SessionBeforeTreeResult {
  cancel?: boolean;
  summary?: { summary: string; details?: unknown };
}

export interface BranchHandlerDeps {
  settings: () => Settings;
  notify: (ctx: ExtensionContext, message: string, level: "info" | "warning" | "error") => void;
}

export function branchSummaryHandler(deps: BranchHandlerDeps) {
  return async (event: SessionBeforeTreeEvent, ctx: ExtensionContext): Promise<SessionBeforeTreeResult | undefined> => {
    const { preparation, signal } = event;
    if (!preparation.userWantsSummary) return undefined;
    const settings = deps.settings();
    const entries = preparation.entriesToSummarize as unknown as SessionEntry[];
    const options = {
      signal,
      reserveTokens: settings.branchSummary.reserveTokens,
      ...(preparation.customInstructions ? { customInstructions: preparation.customInstructions } : {}),
      ...(preparation.replaceInstructions ? { replaceInstructions: true } : {}),
    };
    const summarizers: { method: string; summarizer: Summarizer }[] = [];
    if (ctx.model) {
      const source = summarizerSource(settings, ctx, () => {});
      summarizers.push({ method: "model", summarizer: await source.forBranch(ctx.model) });
    }
    summarizers.push({ method: "extractive", summarizer: extractiveSummarizer() });
    let lastError = "";
    for (const { method, summarizer } of summarizers) {
      const result = await generateBranchSummary(entries, { ...options, summarizer });
      if (result.aborted) return { cancel: true };
      if (result.summary !== undefined) {
        if (lastError) deps.notify(ctx, `bonsai: branch summarized with the ${method} summary (${lastError})`, "warning");
        return {
          summary: {
            summary: result.summary,
            details: { readFiles: result.readFiles ?? [], modifiedFiles: result.modifiedFiles ?? [], method },
          },
        };
      }
      lastError = result.error ?? "no summary";
    }
    return undefined;
  };
}
