/** `bonsai label FILE ID [LABEL]`: sets a label on an entry, or clears it (ops/label.ts). */
import type { Command } from "commander";
import { setLabel } from "../../ops/label.js";
import { colors, print, printJson, runAction, warn, SESSION_ARGUMENT_HELP } from "../output.js";

export function register(program: Command): void {
  program
    .command("label")
    .description("set a label on an entry, or clear it when LABEL is left out")
    .argument("<file>", SESSION_ARGUMENT_HELP)
    .argument("<id>", "entry id (unique prefix accepted)")
    .argument("[label]", "the label; leave out to clear")
    .option("--json", "print stable JSON: {id, label, previous, changed, labelEntryId}")
    .action(
      runAction(async (path: string, id: string, label: string | undefined, options: { json?: boolean }) => {
        const result = await setLabel(path, id, label, { onWarning: warn });
        if (options.json) {
          printJson(result);
          return;
        }
        const c = colors();
        if (!result.changed) {
          print(
            result.label === null
              ? `${result.id} has no label; nothing changed`
              : `${result.id} is already labeled ${c.cyan(`[${result.label}]`)}; nothing changed`,
          );
        } else if (result.label === null) {
          print(`cleared label ${c.cyan(`[${result.previous}]`)} of ${result.id}`);
        } else {
          print(
            `labeled ${result.id} ${c.cyan(`[${result.label}]`)}` +
              (result.previous !== null ? ` (was [${result.previous}])` : ""),
          );
        }
      }),
    );
}
