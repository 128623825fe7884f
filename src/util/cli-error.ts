/**
 * The error of a front end (the CLI or the chat) whose message is already one line fit for the
 * user. Here, below both, so the chat does not import the CLI (docs/ARCHITECTURE.md, layers).
 */
export class CliError extends Error {
  override name = "CliError";
}
