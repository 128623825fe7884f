/** `bonsai copy FROM TO`: a session from one store to another, line for line, checked after writing. */
import type { Command } from "commander";
import { copySession } from "../../storage/copy.js";
import { colors, formatBytes, formatCount, print, printJson, runAction, warn } from "../output.js";

export function register(program: Command): void {
  program
    .command("copy")
    .description("copy a session between stores (files, sqlite:PATH#ID, postgres://…#ID), exactly")
    .argument("<from>", "the session: a file, sqlite:PATH#ID or postgres://…#ID")
    .argument("<to>", "where to: a file or directory, sqlite:PATH[#ID] or postgres://…[#ID] (default id: the session's own)")
    .option("--force", "replace a session that already exists at the target")
    .option("--json", "print stable JSON: {from, to, sessionId, lines, bytes, skippedTornTail?}")
    .action(
      runAction(async (from: string, to: string, options: { force?: boolean; json?: boolean }) => {
        const result = await copySession(from, to, { overwrite: options.force === true });
        if (result.skippedTornTail) {
          warn(`${result.from}:${result.skippedTornTail.line}: incomplete last line (an interrupted write) not copied`);
        }
        if (options.json) {
          printJson(result);
          return;
        }
        const c = colors();
        print(`copied ${c.cyan(result.from)} -> ${c.cyan(result.to)} (${formatCount(result.lines)} lines, ${formatBytes(result.bytes)}, verified)`);
      }),
    );
}
