/** `bonsai migrate FILE`: upgrades a v1/v2 session to v3 in place, keeping a backup (ops/migrate.ts). */
import type { Command } from "commander";
import { type MigrateResult, migrateSession } from "../../ops/migrate.js";
import { type Colors, warn } from "../output.js";
import { registerReportCommand } from "../report-command.js";

export function formatMigration(result: MigrateResult, c: Colors): string {
  if (!result.migrated) return `${result.file} is already at version ${result.fromVersion}; nothing changed`;
  return (
    `${c.green("migrated")} ${result.file} from v${result.fromVersion} to v${result.toVersion} (${result.entries} entries)\n` +
    `backup: ${result.backupPath}` +
    (result.skippedLines ? `\n${c.yellow(`${result.skippedLines} unreadable line(s) were left out; they remain in the backup`)}` : "")
  );
}

export function register(program: Command): void {
  registerReportCommand(program, {
    name: "migrate",
    description: "upgrade a v1/v2 session file to v3 in place, atomically, keeping a backup",
    json: "print stable JSON: {file, fromVersion, toVersion, migrated, backupPath, entries, skippedLines}",
    run: (path) => migrateSession(path, { onWarning: warn }),
    format: (result, _path, c) => formatMigration(result, c),
  });
}
