/**
 * pi's `session_before_compact`, answered by bonsai: bonsai's plan of the cut over the branch pi
 * hands over (the same cut pi prepared, except where bonsai's usage-ratio rule keeps less, see
 * docs/ARCHITECTURE.md), bonsai's prompts, chunking of spans larger than the summarizer's
 * window, redaction, the verbatim user requests and the coverage check, and the method chain of
 * bonsai's settings ending in the extractive summary, so a failing model still compacts.
 */
import type { ExtensionContext, SessionBeforeCompactEvent } from "@mariozechner/pi-coding-agent";
import { summarizeWithFallback } from "../../../src/agent/compaction-run.js";
import { RECALL_NOTE } from "../../../src/agent/recall.js";
import type { AgentSessionEvent } from "../../../src/agent/events.js";
import { planCompaction } from "../../../src/compaction/prepare.js";
import type { SessionEntry } from "../../../src/format/entry-types.js";
import type { Settings } from "../../../src/config/settings.js";
import type { SessionManager } from "../../../src/session/manager.js";
import { extractiveSummarizer } from "../../../src/summarizer/extractive.js";
import { summarizerSource } from "./summarizers.js";

/** What the last compaction through bonsai did, for `/bonsai`. */
export interface CompactionRecord {
  at: string;
  method: string;
  summarizer?: string;
  ms: number;
  tokensBefore: number;
  firstKeptEntryId: string;
  coverageAdded: number;
  warnings: string[];
  /** what made pi compact (pi 1.x says: manual, threshold, overflow) */
  reason?: string;
}

/** Why pi compacts, where it says (pi 1.x's `reason`; pi 0.73.1's event has none). */
const reasonOf = (event: SessionBeforeCompactEvent): string | undefined => (event as { reason?: unknown }).reason as string | undefined;

/** What a `session_before_compact` handler may return (pi does not export the type). */
export interface SessionBeforeCompactResult {
  cancel?: boolean;
  compaction?: { summary: string; firstKeptEntryId: string; tokensBefore: number; details?: unknown };
}

export interface CompactionHandlerDeps {
  settings: () => Settings;
  /** whether the agent has history_search now (pi config or --tools may leave it out): only then does a summary say it can look back */
  canRecall?: () => boolean;
  now?: () => number;
  onRecord: (record: CompactionRecord) => void;
  notify: (ctx: ExtensionContext, message: string, level: "info" | "warning" | "error") => void;
}

/**
 * The handler. It returns nothing (pi goes on with its own compaction) only when bonsai finds no
 * cut on the branch, which pi's own check has normally ruled out already.
 */
export function compactionHandler(deps: CompactionHandlerDeps) {
  const now = deps.now ?? Date.now;
  return async (event: SessionBeforeCompactEvent, ctx: ExtensionContext): Promise<SessionBeforeCompactResult | undefined> => {
    const started = now();
    const settings = deps.settings();
    const branch = event.branchEntries as unknown as SessionEntry[];
    const plan = planCompaction(branch, { ...settings.compaction, ...event.preparation.settings });
    if (!plan.ok) return undefined;
    const { preparation } = plan;
    const warnings: string[] = [];
    const emit = (e: AgentSessionEvent) => {
      if (e.type === "warning") warnings.push(e.message);
      // a model that failed says why, so the fallback notice can name the reason
      else if (e.type === "compaction_retry" && e.action !== "retry") warnings.push(`${e.summarizer} failed: ${e.errorMessage}`);
    };
    const source = summarizerSource(settings, ctx, (message) => warnings.push(message));
    const current = ctx.model;
    const chain = async (requiredTokens: number) => {
      const all = current ? await source.chain(current, requiredTokens) : [];
      if (all.length > 0) return all;
      // no model at all (pi normally refuses earlier): the offline summary still compacts
      return [{ method: "extractive" as const, summarizer: extractiveSummarizer() }];
    };
    const sessionManager = { getLocation: () => ctx.sessionManager.getSessionFile() } as unknown as SessionManager;
    const { result, method } = await summarizeWithFallback(
      // pi-bonsai gives the agent the recall tools (recall.ts): each summary says they exist, when they do
      { chain, emit, settings, now, sessionManager, ...(deps.canRecall?.() ? { summaryFooter: RECALL_NOTE } : {}) },
      preparation,
      // a summary that grew hands over to the next method, unless the user asked for this one
      // (pi 1.x says why it compacts; pi 0.x does not, and every compaction is guarded); the last
      // one is kept even if it grew, because pi may be recovering from an overflow
      { customInstructions: event.customInstructions, signal: event.signal, guardGrowth: reasonOf(event) !== "manual", lastResort: true },
      {},
    );
    const record: CompactionRecord = {
      at: new Date(now()).toISOString(),
      method,
      ms: now() - started,
      tokensBefore: result.tokensBefore,
      firstKeptEntryId: result.firstKeptEntryId,
      coverageAdded: result.coverage?.added.length ?? 0,
      warnings,
      ...(reasonOf(event) && { reason: reasonOf(event) }),
    };
    deps.onRecord(record);
    if (method !== "model" && method !== "remote") {
      deps.notify(ctx, `bonsai: compacted with the ${method} summary (${warnings.at(-1) ?? "the models failed"})`, "warning");
    }
    return {
      compaction: {
        summary: result.summary,
        firstKeptEntryId: result.firstKeptEntryId,
        tokensBefore: result.tokensBefore,
        details: { ...result.details, method, bonsai: { ms: record.ms, coverageAdded: record.coverageAdded } },
      },
    };
  };
}
