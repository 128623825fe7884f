/**
 * `bonsai copy FROM TO`: a session from one store to another, line for line, checked after
 * writing, with its archive of pruned tool output so pruned results stay restorable in the copy.
 */
import type { Command } from "commander";
import { resolve } from "node:path";
import { type CopyResult, copySession } from "../../storage/copy.js";
import { colors, formatBytes, formatCount, print, printJson, runAction, warn } from "../output.js";

/**
 * A location with its file path absolute (a file, sqlite:PATH…), as every location of the report
 * is; what follows the path (`#ID`, ` (table pruned)`) stays as it is.
 */
function absolute(location: string): string {
  if (/^postgres(ql)?:/.test(location)) return location;
  if (!location.startsWith("sqlite:")) return resolve(location);
  const rest = location.slice("sqlite:".length);
  const end = rest.indexOf("#");
  const path = end < 0 ? rest : rest.slice(0, end);
  return `sqlite:${resolve(path)}${rest.slice(path.length)}`;
}

function absolutePaths(result: CopyResult): CopyResult {
  const out: CopyResult = { ...result, from: absolute(result.from), to: absolute(result.to) };
  if (result.archive) out.archive = { ...result.archive, from: absolute(result.archive.from), to: absolute(result.archive.to) };
  if (result.replacedArchive) out.replacedArchive = { ...result.replacedArchive, location: absolute(result.replacedArchive.location) };
  return out;
}

export function register(program: Command): void {
  program
    .command("copy")
    .description(
      "copy a session between stores (files, sqlite:PATH#ID, postgres://…#ID), exactly, with its archive of pruned tool output",
    )
    .argument("<from>", "the session: a file, sqlite:PATH#ID or postgres://…#ID")
    .argument("<to>", "where to: a file or directory, sqlite:PATH[#ID] or postgres://…[#ID] (default id: the session's own)")
    .option("--force", "replace a session, and its archive of pruned tool output, that already exists at the target")
    .option(
      "--json",
      "print stable JSON: {from, to, sessionId, lines, bytes, skippedTornTail?, archive?: {from, to, lines, bytes, skippedTornTail?}, replacedArchive?: {location, lines}}",
    )
    .action(
      runAction(async (from: string, to: string, options: { force?: boolean; json?: boolean }) => {
        const result = absolutePaths(await copySession(from, to, { overwrite: options.force === true }));
        if (result.skippedTornTail) {
          warn(`${result.from}:${result.skippedTornTail.line}: incomplete last line (an interrupted write) not copied`);
        }
        if (result.archive?.skippedTornTail) {
          warn(`${result.archive.from}:${result.archive.skippedTornTail.line}: incomplete last line (an interrupted append) not copied`);
        }
        if (result.replacedArchive) {
          warn(`${result.replacedArchive.location}: replaced the archive of pruned tool output that was there (${formatCount(result.replacedArchive.lines)} lines)`);
        }
        if (options.json) {
          printJson(result);
          return;
        }
        const c = colors();
        print(`copied ${c.cyan(result.from)} -> ${c.cyan(result.to)} (${formatCount(result.lines)} lines, ${formatBytes(result.bytes)}, verified)`);
        if (result.archive) {
          print(
            `with its pruned originals: ${c.cyan(result.archive.from)} -> ${c.cyan(result.archive.to)} (${formatCount(result.archive.lines)} lines, ${formatBytes(result.archive.bytes)}, verified)`,
          );
        }
      }),
    );
}
