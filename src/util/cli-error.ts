/**
 * The error of a front end (the CLI or the chat) whose message is already one line fit for the
 * user. Here, below both, so the chat does not import the CLI (docs/ARCHITECTURE.md, layers).
 */
export class CliError extends Error {
  override name = "CliError";
}

/** A command line that asks for something impossible (options that exclude each other): exit code 2, as commander's own usage errors. */
export class UsageError extends CliError {
  override name = "UsageError";
}
