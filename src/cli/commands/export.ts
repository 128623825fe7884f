/**
 * `bonsai export LOCATION --html [-o FILE]` (the session page as one self-contained file) and
 * `--md [--all]` (Markdown of the active path, or of every entry), bounded by --max-bytes. The
 * work is src/view/export.ts's; the session is only read.
 */
import { statSync, writeFileSync } from "node:fs";
import { type Command, InvalidArgumentError } from "commander";
import { parseByteSize } from "../../server/limits.js";
import { positiveInteger } from "../numeric-options.js";
import { CliError, formatBytes, progress, runAction, UsageError, warn, SESSION_ARGUMENT_HELP } from "../output.js";
import { storeKindOf } from "../../storage/file-list.js";
import { writable, writeFileAtomic } from "../../storage/file-writer.js";
import { untrusted } from "../../util/terminal-safe.js";

interface ExportCommandOptions {
  html?: boolean;
  md?: boolean;
  all?: boolean;
  output?: string;
  maxBytes?: number;
  contextWindow?: number;
  reserve?: number;
}

function byteSize(value: string): number {
  try {
    return parseByteSize(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

export function register(program: Command): void {
  program
    .command("export")
    .description("write the session as one self-contained HTML page (--html) or as Markdown (--md)")
    .argument("<location>", SESSION_ARGUMENT_HELP)
    .option("--html", "the session page: tree, entries, compactions, token timeline, search (works offline)")
    .option("--md", "Markdown of the active path, for pasting into an issue")
    .option("--all", "with --md: every entry of every branch, not only the active path")
    .option("-o, --output <file>", "write to FILE instead of standard output")
    .option("--max-bytes <size>", "largest output, e.g. 5mb or 60000; longer bodies are clipped with a note (default 20mb)", byteSize)
    .option("--context-window <tokens>", "the model's context window, for the timeline's threshold (default: from the model registry)", positiveInteger)
    .option("--reserve <tokens>", "tokens reserved for replies: the threshold is window - reserve (default 16384)", positiveInteger)
    .action(
      runAction(async (location: string, options: ExportCommandOptions) => {
        if (options.html === options.md) throw new UsageError("export: pass one of --html or --md");
        if (options.all && !options.md) throw new UsageError("export: --all goes with --md (the page always shows every branch)");
        if (options.output) refuseToReplace(options.output); // before the work, not after it
        const { exportSession } = await import("../../view/export.js");
        const text = await exportSession(location, {
          format: options.html ? "html" : "md",
          all: options.all,
          maxBytes: options.maxBytes,
          contextWindow: options.contextWindow,
          reserveTokens: options.reserve,
          onWarning: warn,
        });
        if (options.output) {
          const bytes = Buffer.from(text, "utf8"); // encoded once: 20 MB of page, written and measured
          writeExport(options.output, bytes);
          progress(`wrote ${options.output} (${formatBytes(bytes.length)})`);
        } else {
          // to a terminal, session text must not drive it; to a pipe or a file, the export is as written
          process.stdout.write(process.stdout.isTTY ? untrusted(text) : text);
        }
      }),
    );
}

/**
 * Refuses an output that is a session or a database of them (a page written over the session
 * being exported, or over a store, loses it), or a file this user may not write (the rename
 * that replaces it would still go through where the folder allows it).
 */
function refuseToReplace(path: string): void {
  const existing = statSync(path, { throwIfNoEntry: false });
  if (!existing?.isFile()) return;
  const kind = storeKindOf(path);
  if (kind) throw new CliError(`export: ${path} holds ${kind}, which an export does not write over; choose another -o`);
  if (!writable(path)) throw new CliError(`export: ${path} is not writable by this user; choose another -o`);
}

/**
 * Writes the export to `path` through a temp file and a rename, so a full disk leaves the page
 * that was there whole; a device or a pipe (`-o /dev/stdout`) is written to as it is.
 */
function writeExport(path: string, bytes: Buffer): void {
  try {
    const existing = statSync(path, { throwIfNoEntry: false });
    if (existing && !existing.isFile()) writeFileSync(path, bytes);
    else writeFileAtomic(path, bytes);
  } catch (error) {
    throw new CliError(`cannot write ${path}: ${(error as Error).message}`);
  }
}
