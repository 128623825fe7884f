/** `bonsai migrate FILE`: upgrades a v1/v2 session file to v3 in place, keeping a backup. */
import type { Command } from "commander";
import { loadSessionFile } from "../../session/load.js";
import { SessionManager } from "../../session/manager.js";
import { sessionVersion } from "../../session/migrate.js";
import { CURRENT_SESSION_VERSION } from "../../session/types.js";
import { colors, print, printJson, requireSessionFile, runAction, warn } from "../output.js";

export interface MigrateResult {
  file: string;
  fromVersion: number;
  toVersion: number;
  migrated: boolean;
  backupPath: string | null;
  entries: number;
  /** lines that could not be read: they are not in the migrated file, only in the backup */
  skippedLines: number;
}

/**
 * Reads the version without the lock first, so a current file is never opened for writing
 * (its bytes stay identical). An older file is opened for writing, which migrates it atomically
 * under the lock and keeps `<file>.bak-<time>`.
 */
export function migrateFile(path: string): MigrateResult {
  const file = requireSessionFile(path);
  const loaded = loadSessionFile(file);
  const version = sessionVersion(loaded.fileEntries);
  if (version >= CURRENT_SESSION_VERSION) {
    for (const issue of loaded.issues) warn(`${file}:${issue.line}: ${issue.message}`);
    return {
      file,
      fromVersion: version,
      toVersion: version,
      migrated: false,
      backupPath: null,
      entries: loaded.fileEntries.length - 1,
      skippedLines: loaded.issues.filter((i) => i.skipped).length,
    };
  }
  let backupPath: string | null = null;
  let fromVersion = version;
  const session = SessionManager.open(file, {
    onWarning: warn,
    onMigrate: (migration) => {
      fromVersion = migration.fromVersion;
      backupPath = migration.backupPath ?? null;
    },
  });
  try {
    return {
      file,
      fromVersion,
      toVersion: CURRENT_SESSION_VERSION,
      migrated: backupPath !== null,
      backupPath,
      entries: session.getEntries().length,
      skippedLines: session.getLoadIssues().filter((i) => i.skipped).length,
    };
  } finally {
    session.close();
  }
}

export function register(program: Command): void {
  program
    .command("migrate")
    .description("upgrade a v1/v2 session file to v3 in place, atomically, keeping a backup")
    .argument("<file>", "session file (.jsonl)")
    .option("--json", "print stable JSON: {file, fromVersion, toVersion, migrated, backupPath, entries, skippedLines}")
    .action(
      runAction((path: string, options: { json?: boolean }) => {
        const result = migrateFile(path);
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
