/**
 * A lossy or format-changing rewrite behind a backup, for any store (a migration, a rewrite that
 * leaves unreadable lines out): the backup first, then the rewrite, and the backup taken back
 * when the rewrite fails.
 */
import type { RewriteOutcome, SessionBackend } from "./types.js";

/**
 * A backup of the session, then the rewrite: gives the backup's location. A rewrite that fails
 * (a full disk) left the session as the backup holds it, so the backup is taken back: retried, a
 * migration or prune would otherwise leave one more copy of the session on a disk already full.
 */
export function rewriteAfterBackup(backend: SessionBackend, lines: readonly string[]): RewriteOutcome & { backup: string } {
  const backup = backend.backup();
  try {
    return { ...backend.rewrite(lines), backup };
  } catch (error) {
    try {
      backend.discardBackup(backup);
    } catch {
      // kept: a backup too many, never a session lost
    }
    throw error;
  }
}
