/**
 * An operation stopped through its AbortSignal before it wrote anything. Operations only take a
 * signal; which key or process signal aborts it is the front end's business, and so is the exit
 * code (docs/ARCHITECTURE.md, layers).
 */
import { CliError } from "../util/cli-error.js";

/** The message says what was left as it was, e.g. "compaction cancelled: FILE is unchanged". */
export class OperationCancelledError extends CliError {
  override name = "OperationCancelledError";
}
