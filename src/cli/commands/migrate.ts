/** `bonsai migrate FILE`: upgrades a v1/v2 session to v3 in place, keeping a backup. */
import type { Command } from "commander";
import { sessionVersion } from "../../format/migrate.js";
import { CURRENT_SESSION_VERSION } from "../../format/entry-types.js";
import { openSession } from "../open-session.js";
import { colors, print, printJson, runAction, warn } from "../output.js";

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
 * Reads the version without the lock first, so a current session is never opened for writing
 * (its bytes stay identical). An older one is opened for writing, which migrates it atomically
 * under the lock and keeps a backup (`<file>.bak-<time>`, or `<id>.bak-<time>` in a database).
 */
export async function migrateFile(path: string): Promise<MigrateResult> {
  let oldVersion: number | undefined;
  const reader = await openSession(path, {
    readOnly: true,
    onMigrate: (migration) => {
      oldVersion = migration.fromVersion;
    },
  });
  const file = reader.getLocation() ?? path;
  try {
    if (oldVersion === undefined) {
      for (const issue of reader.getLoadIssues()) warn(`${file}:${issue.line}: ${issue.message}`);
      const version = sessionVersion([reader.getHeader()]);
      return {
        file,
        fromVersion: version,
        toVersion: version,
        migrated: false,
        backupPath: null,
        entries: reader.getEntries().length,
        skippedLines: reader.getLoadIssues().filter((i) => i.skipped).length,
      };
    }
  } finally {
    await reader.close();
  }
  let backupPath: string | null = null;
  let fromVersion = oldVersion;
  const session = await openSession(path, {
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
    await session.close();
  }
}

export function register(program: Command): void {
  program
    .command("migrate")
    .description("upgrade a v1/v2 session file to v3 in place, atomically, keeping a backup")
    .argument("<file>", "session file (.jsonl), sqlite:PATH#ID or postgres://…#ID")
    .option("--json", "print stable JSON: {file, fromVersion, toVersion, migrated, backupPath, entries, skippedLines}")
    .action(
      runAction(async (path: string, options: { json?: boolean }) => {
        const result = await migrateFile(path);
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
