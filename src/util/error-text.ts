/** The message of a thrown value: an Error's message, anything else as text (code may throw non-Errors). */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `error` with its message naming `where` (a session's path or location) first, unless it names
 * it already or names a file of its own (a Node error's `path`): "ENOSPC: no space left on device,
 * write" and SQLite's "database or disk is full" say which session they were for.
 */
export function located(error: unknown, where: string): unknown {
  if (error instanceof Error && (error as NodeJS.ErrnoException).path === undefined && !error.message.includes(where)) error.message = `${where}: ${error.message}`;
  return error;
}
