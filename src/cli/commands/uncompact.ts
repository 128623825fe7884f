/** `bonsai uncompact FILE [--compaction ID] [--dry-run] [--json]`: undoes a compaction on a new branch (ops/uncompact.ts). */
import type { Command } from "commander";
import { uncompactSession } from "../../ops/uncompact.js";
import { colors, print, printJson, runAction, SESSION_ARGUMENT_HELP, warn } from "../output.js";

interface CommandOptions {
  compaction?: string;
  dryRun?: boolean;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command("uncompact")
    .description("undo the latest compaction: a new branch from the entry before it, with what came after copied onto it (nothing is rewritten)")
    .argument("<file>", SESSION_ARGUMENT_HELP)
    .option("--compaction <id>", "the compaction to undo (default: the latest on the current branch)")
    .option("--dry-run", "say what would be copied, write nothing")
    .option("--json", "print stable JSON: {compactionId, branchFromId, copied, skipped, oldLeafId, newLeafId, changed}")
    .action(
      runAction(async (path: string, options: CommandOptions) => {
        const result = await uncompactSession(path, {
          ...(options.compaction !== undefined ? { compactionId: options.compaction } : {}),
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
        if (!result.changed) {
          print(`would undo compaction ${result.compactionId}: a new branch from ${from} with copies of ${copies}; nothing written (--dry-run)`);
        } else {
          print(`undid compaction ${result.compactionId}: a new branch from ${from} with copies of ${copies}`);
          print(`leaf: ${c.bold(result.newLeafId ?? "(none)")} (was ${result.oldLeafId ?? "(none)"}); the compacted branch is kept, check out ${result.oldLeafId} to return to it`);
        }
        for (const s of result.skipped) print(c.dim(`not copied: ${s.id} (${s.type}: ${s.reason})`));
      }),
    );
}
