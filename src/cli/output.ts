/**
 * What every command shares: colors, JSON output, warnings, progress, Ctrl-C, and the error
 * boundary that turns any failure into one line on stderr and exit code 1.
 */
import { OperationCancelledError } from "../ops/cancelled.js";
import { SessionFileError } from "../storage/load.js";
import { SessionLockedError } from "../storage/lock.js";
import { CliError, UsageError } from "../util/cli-error.js";
import { useColor } from "../util/colors.js";
import { BIDI_OVERRIDES, terminalSafe, untrusted } from "../util/terminal-safe.js";
import { connectionErrorText, FetchFailures, isConnectionError } from "../chat/connection-error.js";

export { CliError, UsageError } from "../util/cli-error.js";

/** Exit code of a usage error (unknown command or option, missing argument, options that exclude each other). */
export const USAGE_ERROR = 2;
export { type Colors, colors, useColor } from "../util/colors.js";

/** Stable JSON: two-space indentation, one trailing newline, key order as the caller built it. */
/** The help of a command's session argument: every store's location form. */
export const SESSION_ARGUMENT_HELP = "session file (.jsonl), sqlite:PATH#ID or postgres://…#ID";

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Human output: session text in it cannot drive the terminal (util/terminal-safe.ts). */
export function print(text: string): void {
  const color = useColor();
  const safe = terminalSafe(text, color);
  const body = safe.endsWith("\n") ? safe.slice(0, -1) : safe;
  // a color that text from a session opened and never closed stops here, not in the shell's prompt
  process.stdout.write(color && body.includes("\u001b[") ? `${body}\u001b[0m\n` : `${body}\n`);
}

/** Every control character (tabs and line breaks too, on one line) and the bidirectional overrides. */
const LINE_CONTROLS = new RegExp(`[\u0000-\u001f\u007f-\u009f${BIDI_OVERRIDES}]`, "g");

/**
 * Collapses a message to one line, so every report on stderr stays one line, and masks control
 * characters: messages may quote bytes of a binary file, which must not drive the terminal.
 */
export function oneLine(text: string): string {
  return text
    .replace(/\s*\n\s*/g, " ")
    .replace(LINE_CONTROLS, "?")
    .trim();
}

/** Indents every line of a block of text (a summary, a message) by two spaces, under its heading. */
export function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}

/** Warnings already printed: a command that opens its session more than once (to plan, then to write) says each once. */
const warned = new Set<string>();

export function warn(message: string): void {
  const line = `warning: ${oneLine(message)}\n`;
  if (warned.has(line)) return;
  warned.add(line);
  process.stderr.write(line);
}

/** Progress goes to stderr and only to a terminal, so piped output stays clean. */
export function progress(message: string): void {
  if (process.stderr.isTTY) process.stderr.write(`${message}\n`);
}

/** The one line printed for a failure. Unknown errors say so; their stack only with BONSAI_DEBUG=1. */
const PROGRAMMING_ERRORS = new Set(["TypeError", "ReferenceError", "RangeError", "SyntaxError", "EvalError", "URIError"]);

export function describeError(error: unknown): string {
  if (error instanceof CliError || error instanceof SessionFileError || error instanceof SessionLockedError) {
    return oneLine(error.message);
  }
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    // fs errors carry path and reason already ("EACCES: permission denied, open '/x'")
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return oneLine(error.message);
    // Errors that signal a bug in bonsai, not a problem with the input or the model.
    if (PROGRAMMING_ERRORS.has(error.name)) {
      return `${oneLine(error.message)} (unexpected ${error.name}; set BONSAI_DEBUG=1 for details)`;
    }
    return oneLine(error.message);
  }
  return `unexpected failure: ${oneLine(String(error))}`;
}

/** Fetch failures of a command that talks to a model, so "Connection error." can say which URL and why. */
let fetchFailures: FetchFailures | undefined;

/** Starts watching this process's fetches (once): a command about to reach a model server calls it. */
export function watchConnections(): void {
  if (fetchFailures) return;
  fetchFailures = new FetchFailures();
  fetchFailures.install();
}

/**
 * The failure's line; a connection error also names the URL that could not be reached and why,
 * unless the line already names that URL (the remote summarizer's own error does).
 */
function failureLine(error: unknown): string {
  const line = describeError(error);
  const last = fetchFailures?.last();
  return last && isConnectionError(line) && !line.includes(last.url) ? `${line} (${connectionErrorText(last.url, last.cause)})` : line;
}

/**
 * What kind of failure, for `--json` callers: a SessionFileError's code (NOT_FOUND, BAD_HEADER…),
 * LOCKED, an fs error's code (EACCES…), USAGE for a usage error, INVALID_INPUT for any other one-line
 * error, INTERNAL for a bug.
 */
export function errorCode(error: unknown): string {
  if (error instanceof SessionFileError) return error.code;
  if (error instanceof SessionLockedError) return "LOCKED";
  if (error instanceof UsageError) return "USAGE";
  if (error instanceof CliError) return "INVALID_INPUT";
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code;
  if (error instanceof Error && PROGRAMMING_ERRORS.has(error.name)) return "INTERNAL";
  return "FAILED";
}

/** With --json, a failure is also JSON on stdout, so a caller that parses stdout gets an answer (docs/json.md). */
export function printJsonError(message: string, code: string): void {
  printJson({ error: message, code });
}

export function reportError(error: unknown, json = false): void {
  const line = failureLine(error);
  if (json) printJsonError(line, errorCode(error));
  process.stderr.write(`bonsai: ${line}\n`);
  if (process.env.BONSAI_DEBUG === "1" && error instanceof Error && error.stack) {
    process.stderr.write(`${untrusted(error.stack)}\n`);
  }
}

/**
 * Wraps a command action: any error becomes `bonsai: <one line>` on stderr and exit code 1 (2 for
 * a usage error).
 * Sets process.exitCode rather than calling exit(), so stdout written so far is flushed.
 */
export function runAction<A extends unknown[]>(action: (...args: A) => void | Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await action(...args);
    } catch (error) {
      reportError(error, wantsJson(args));
      process.exitCode = error instanceof UsageError ? USAGE_ERROR : 1;
    }
  };
}

/** Whether the command was given --json: commander passes the options object before the command itself. */
function wantsJson(args: readonly unknown[]): boolean {
  const options = args.at(-2);
  return typeof options === "object" && options !== null && (options as { json?: unknown }).json === true;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export { formatCount } from "../util/count.js";

/** Exit code after Ctrl-C, as shells report a process ended by SIGINT. */
export const INTERRUPTED = 130;

/**
 * An AbortSignal that every Ctrl-C aborts, for commands that wait on a model. Every press is
 * caught (a split turn has two requests in flight; a second press must not kill the process
 * halfway through its cleanup); `dispose` restores the default behaviour.
 */
export function abortOnInterrupt(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  process.on("SIGINT", onInterrupt);
  return { signal: controller.signal, dispose: () => process.off("SIGINT", onInterrupt) };
}

/**
 * Runs an operation that Ctrl-C cancels. The operation only sees the signal (the CLI owns the
 * process signals, docs/ARCHITECTURE.md, layers); its OperationCancelledError ends the command
 * with that one line and exit code 130, as a shell reports an interrupted process.
 */
export async function runInterruptible(work: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const interrupt = abortOnInterrupt();
  try {
    await work(interrupt.signal);
  } catch (error) {
    if (!(error instanceof OperationCancelledError)) throw error;
    process.stderr.write(`bonsai: ${error.message}\n`);
    process.exitCode = INTERRUPTED;
  } finally {
    interrupt.dispose();
  }
}
