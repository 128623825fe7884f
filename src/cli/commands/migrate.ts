/** `bonsai migrate FILE`: upgrades a v1/v2 session to v3 in place, keeping a backup (ops/migrate.ts). */
import type { Command } from "commander";
import { migrateSession } from "../../ops/migrate.js";
import { colors, print, printJson, runAction, warn } from "../output.js";

export function register(program: Command): void {
  program
    .command("migrate")
    .description("upgrade a v1/v2 session file to v3 in place, atomically, keeping a backup")
    .argument("<file>", "session file (.jsonl), sqlite:PATH#ID or postgres://…#ID")
    .option("--json", "print stable JSON: {file, fromVersion, toVersion, migrated, backupPath, entries, skippedLines}")
    .action(
      runAction(async (path: string, options: { json?: boolean }) => {
        const result = await migrateSession(path, { onWarning: warn });
        if (options.json) {
          printJson(result);
          return;
        }
        const c = colors();
        if (!result.migrated) {
          print(`${result.file} is already at version ${result.fromVersion}; nothing changed`);
          return;
        }
        print(
          `${c.green("migrated")} ${result.file} from v${result.fromVersion} to v${result.toVersion} (${result.entries} entries)\n` +
            `backup: ${result.backupPath}` +
            (result.skippedLines
              ? `\n${c.yellow(`${result.skippedLines} unreadable line(s) were left out; they remain in the backup`)}`
              : ""),
        );
      }),
    );
}
