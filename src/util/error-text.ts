/** The message of a thrown value: an Error's message, anything else as text (code may throw non-Errors). */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
