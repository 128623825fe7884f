/** `bonsai pin FILE ID [--unpin]`: every later compaction carries a pinned entry verbatim (ops/pin.ts). */
import type { Command } from "commander";
import { pinEntry } from "../../ops/pin.js";
import { colors, print, printJson, runAction, SESSION_ARGUMENT_HELP, warn } from "../output.js";

export function register(program: Command): void {
  program
    .command("pin")
    .description("pin an entry: every later compaction carries its text verbatim (--unpin: stop)")
    .argument("<file>", SESSION_ARGUMENT_HELP)
    .argument("<id>", "entry id (unique prefix accepted)")
    .option("--unpin", "unpin it instead")
    .option("--json", "print stable JSON: {id, pinned, changed, pinEntryId, pinnedIds}")
    .action(
      runAction(async (path: string, id: string, options: { unpin?: boolean; json?: boolean }) => {
        const result = await pinEntry(path, id, { ...(options.unpin ? { unpin: true } : {}), onWarning: warn });
        if (options.json) {
          printJson(result);
          return;
        }
        const c = colors();
        const state = result.pinned ? "pinned" : "not pinned";
        if (!result.changed) print(`${result.id} is already ${state}; nothing changed`);
        else print(`${result.pinned ? "pinned" : "unpinned"} ${c.bold(result.id)}; ${result.pinnedIds.length} pinned on the branch`);
      }),
    );
}
