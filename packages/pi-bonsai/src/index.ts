/**
 * pi-bonsai: bonsai inside pi. pi loads this file as an extension (package.json `pi.extensions`);
 * it takes over compaction (`session_before_compact`), branch summaries for `/tree`
 * (`session_before_tree`), prunes tool output in each request without touching the session file
 * (`context`), and adds `/bonsai`, `/pin`, `/unpin` and the tools history_search and
 * history_read, so the agent can read what a compaction summarized away. Settings come from bonsai's settings files
 * (`~/.bonsai/settings.json`, `<project>/.bonsai/settings.json`), read again at every use so an
 * edit applies without a restart. This is the shell; the rules are in the modules it wires.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { loadSettings, type Settings } from "../../../src/config/settings.js";
import type { SessionEntry } from "../../../src/format/entry-types.js";
import type { AgentMessage } from "../../../src/format/message-types.js";
import { branchSummaryHandler } from "./branch-summary.js";
import { type CompactionRecord, compactionHandler } from "./compaction.js";
import { registerPinCommands } from "./pins.js";
import { registerRecallTools } from "./recall.js";
import { pruneRequest, pruningEdits, type RequestPruningConfig, resultEntryIds } from "./request-pruning.js";

/** The request pruning bonsai's settings ask for. */
const requestPruning = ({ pruning }: Pick<Settings, "pruning">): RequestPruningConfig => ({
  prune: {},
  savings: { maxResultTokens: pruning.maxResultTokens, supersededReads: pruning.supersededReads, wholeOutputAt: "the session file" },
});
import { statusLines } from "./status.js";

function notify(ctx: ExtensionContext, message: string, level: "info" | "warning" | "error"): void {
  if (ctx.hasUI) ctx.ui.notify(message, level);
  else if (level !== "info") console.error(message);
}

export default function piBonsai(pi: ExtensionAPI): void {
  let cwd = process.cwd();
  let lastCompaction: CompactionRecord | undefined;
  let lastPruning: { replaced: number; tokensSaved: number } | undefined;
  let piCompactionSettings: { reserveTokens: number; keepRecentTokens: number; enabled: boolean } | undefined;
  const settings = (): Settings => loadSettings({ cwd, onWarning: (message) => console.error(`pi-bonsai: ${message}`) });

  pi.on("session_start", (_event, ctx) => {
    cwd = ctx.cwd;
  });

  const compact = compactionHandler({
    settings,
    notify,
    onRecord: (record) => (lastCompaction = record),
    canRecall: () => pi.getActiveTools().includes("history_search"),
  });
  pi.on("session_before_compact", (event, ctx) => {
    piCompactionSettings = event.preparation.settings;
    return compact(event, ctx);
  });

  // pi 1.x reports a compaction that failed after bonsai answered (pi 0.73.1 never fires this)
  pi.on("session_compact_failed" as "session_compact", (event, ctx) => {
    const failed = event as unknown as { reason?: string; errorMessage?: string; aborted?: boolean; fromExtension?: boolean };
    if (failed.aborted || !failed.fromExtension) return;
    notify(ctx, `bonsai: the ${failed.reason ?? ""} compaction failed: ${failed.errorMessage ?? "no reason given"}`.replace("  ", " "), "error");
  });

  pi.on("session_before_tree", branchSummaryHandler({ settings, notify }));

  // pi 1.x keeps the pruning: at each turn's end it appends the prunings as context edits (the
  // originals stay in the file), so later requests, and pi on reopening, send the notices
  pi.on("turn_end", (event, ctx) => {
    const boundary = event as unknown as { entries?: unknown[]; context?: { contextMessages?: AgentMessage[] } };
    const messages = boundary.context?.contextMessages;
    if (!messages) return undefined; // pi 0.x: pruned in each request only
    const edits = pruningEdits(messages, resultEntryIds(ctx.sessionManager.getBranch() as unknown as SessionEntry[]), requestPruning(settings()));
    if (edits.length === 0) return undefined;
    return { entries: [...(boundary.entries ?? []), ...edits] } as never;
  });

  pi.on("context", (event, ctx) => {
    const branch = ctx.sessionManager.getBranch() as unknown as SessionEntry[];
    const result = pruneRequest(event.messages as unknown as AgentMessage[], resultEntryIds(branch), requestPruning(settings()));
    lastPruning = { replaced: result.replaced, tokensSaved: result.tokensSaved };
    if (result.replaced === 0) return undefined;
    return { messages: result.messages as unknown as typeof event.messages };
  });

  registerPinCommands(pi, notify);
  registerRecallTools(pi);

  pi.registerCommand("bonsai", {
    description: "bonsai: context use, the next compaction, the last one, request pruning",
    handler: async (_args, ctx) => {
      const usage = ctx.getContextUsage();
      const lines = statusLines({
        branch: ctx.sessionManager.getBranch() as unknown as SessionEntry[],
        ...(usage ? { usage } : {}),
        settings: { ...settings().compaction, ...piCompactionSettings },
        ...(lastCompaction ? { lastCompaction } : {}),
        ...(lastPruning ? { lastPruning } : {}),
      });
      notify(ctx, lines.join("\n"), "info");
      if (!ctx.hasUI) console.log(lines.join("\n"));
    },
  });
}
