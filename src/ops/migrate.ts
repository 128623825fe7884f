/**
 * Upgrading a v1/v2 session to v3 in its store, keeping a backup. The operation behind
 * `bonsai migrate`.
 */
import { CURRENT_SESSION_VERSION } from "../format/entry-types.js";
import { sessionVersion } from "../format/migrate.js";
import { openSession, type WarningListener } from "./open-session.js";

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
 * Takes a location, not a SessionManager: the migration happens as the session is opened.
 */
export async function migrateSession(location: string, options: { onWarning?: WarningListener } = {}): Promise<MigrateResult> {
  const { onWarning } = options;
  let oldVersion: number | undefined;
  const reader = await openSession(location, {
    readOnly: true,
    onMigrate: (migration) => {
      oldVersion = migration.fromVersion;
    },
  });
  const file = reader.getLocation() ?? location;
  try {
    if (oldVersion === undefined) {
      // the first open had no listener, so a current session's problems are told here, once
      for (const issue of reader.getLoadIssues()) onWarning?.(`${file}:${issue.line}: ${issue.message}`);
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
  const session = await openSession(location, {
    ...(onWarning ? { onWarning } : {}),
    migrate: true, // written at open, not before a first write that never comes
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
