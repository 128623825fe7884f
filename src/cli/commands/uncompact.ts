/** `bonsai uncompact FILE [--compaction ID | --branch-summary] [--dry-run] [--json]`: undoes a compaction or branch summary on a new branch (ops/uncompact.ts). */
import { type Command, Option } from "commander";
import { summaryName, uncompactSession } from "../../ops/uncompact.js";
import { colors, print, printJson, runAction, SESSION_ARGUMENT_HELP, warn } from "../output.js";

interface CommandOptions {
  compaction?: string;
  branchSummary?: boolean;
  dryRun?: boolean;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command("uncompact")
    .description("undo the latest compaction: a new branch from the entry before it, with what came after copied onto it (nothing is rewritten)")
    .argument("<file>", SESSION_ARGUMENT_HELP)
    .option("--compaction <id>", "the compaction (or branch summary) to undo (default: the latest compaction on the current branch)")
    .addOption(new Option("--branch-summary", "undo the latest branch summary instead (what a move in the tree with a summary wrote)").conflicts("compaction"))
    .option("--dry-run", "say what would be copied, write nothing")
    .option("--json", "print stable JSON: {compactionId, type, branchFromId, copied, skipped, oldLeafId, newLeafId, changed}")
    .action(
      runAction(async (path: string, options: CommandOptions) => {
        const result = await uncompactSession(path, {
          ...(options.compaction !== undefined ? { compactionId: options.compaction } : {}),
          ...(options.branchSummary ? { type: "branch_summary" as const } : {}),
          ...(options.dryRun ? { dryRun: true } : {}),
          onWarning: warn,
        });
        if (options.json) {
          printJson(result);
          return;
        }
        const c = colors();
        const copies = `${result.copied.length} ${result.copied.length === 1 ? "entry" : "entries"} written since it`;
        const from = result.branchFromId ?? "the start of the session";
        const what = `${summaryName(result.type)} ${result.compactionId}`;
        if (!result.changed) {
          print(`would undo ${what}: a new branch from ${from} with copies of ${copies}; nothing written (--dry-run)`);
        } else {
          print(`undid ${what}: a new branch from ${from} with copies of ${copies}`);
          print(`leaf: ${c.bold(result.newLeafId ?? "(none)")} (was ${result.oldLeafId ?? "(none)"}); the branch with it is kept, check out ${result.oldLeafId} to return to it`);
        }
        for (const s of result.skipped) print(c.dim(`not copied: ${s.id} (${s.type}: ${s.reason})`));
      }),
    );
}
