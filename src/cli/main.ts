#!/usr/bin/env node
/**
 * The `bonsai` command. Each command lives in its own file under commands/ and registers itself
 * here with one line. register() must stay cheap: a command that needs a heavy module (pi-ai, the
 * server) imports it inside its action, so `bonsai info` never pays for it.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { register as registerChat } from "./commands/chat.js";
import { register as registerCheckout } from "./commands/checkout.js";
import { register as registerCompact } from "./commands/compact.js";
import { register as registerContext } from "./commands/context.js";
import { register as registerCopy } from "./commands/copy.js";
import { register as registerEval } from "./commands/eval.js";
import { register as registerExport } from "./commands/export.js";
import { register as registerInfo } from "./commands/info.js";
import { register as registerLabel } from "./commands/label.js";
import { register as registerLs } from "./commands/ls.js";
import { register as registerMigrate } from "./commands/migrate.js";
import { register as registerPrune } from "./commands/prune.js";
import { register as registerServe } from "./commands/serve.js";
import { register as registerSettings } from "./commands/settings.js";
import { register as registerTree } from "./commands/tree.js";
import { register as registerView } from "./commands/view.js";
import { printJsonError, reportError, USAGE_ERROR } from "./output.js";

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** The first commands a newcomer runs, under the list of commands. */
const TOP_LEVEL_EXAMPLES = `
Examples:
  bonsai info session.jsonl                 what a session holds
  bonsai tree session.jsonl --depth 20      its branches, labels and summaries
  bonsai compact session.jsonl --dry-run    what a compaction would summarize and keep
  bonsai compact session.jsonl --model anthropic/claude-sonnet-4-5
  bonsai export session.jsonl --html -o session.html
  bonsai chat --base-url http://localhost:11434/v1 --model-id qwen3 --context-window 32768
  bonsai settings                           the settings in effect here, and where each comes from

Each command has its own --help. Wherever a command takes a session file (pi's and oh-my-pi's
JSONL), it also takes sqlite:PATH#ID and postgres://…#ID.`;

export function buildProgram(): Command {
  const program = new Command("bonsai")
    .description("inspect, compact and repair LLM agent session files (pi / oh-my-pi JSONL)")
    .version(packageVersion(), "-v, --version")
    .showSuggestionAfterError(true)
    .configureOutput({
      // commander's own errors, as one line in the same shape as every other failure
      // commander puts its suggestion on a line of its own: joined, so a usage error stays one line
      outputError: (text, write) => {
        const line = `${text.replace(/^error: /, "").trim().replace(/\s*\n\s*\(Did you mean/g, " (did you mean").replace(/\s*\n\s*/g, " ")} (see bonsai --help)`;
        if (process.argv.includes("--json")) printJsonError(line, "USAGE");
        write(`bonsai: ${line}\n`);
      },
    })
    .exitOverride();

  registerInfo(program);
  registerTree(program);
  registerContext(program);
  registerLabel(program);
  registerMigrate(program);
  registerCheckout(program);
  registerCompact(program);
  registerEval(program);
  registerPrune(program);
  registerServe(program);
  registerChat(program);
  registerLs(program);
  registerCopy(program);
  registerExport(program);
  registerView(program);
  registerSettings(program);
  program.addHelpText("after", TOP_LEVEL_EXAMPLES);
  return program;
}

/** `bonsai -V` as well as `-v`: commander takes one short flag per option, and both are common. */
function withVersionAlias(argv: readonly string[]): string[] {
  return argv.length === 3 && argv[2] === "-V" ? [argv[0], argv[1], "-v"] : [...argv];
}

async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(withVersionAlias(argv));
  } catch (error) {
    if (error instanceof CommanderError) {
      // help and version exit 0; everything else commander rejects is a usage error
      process.exitCode = error.exitCode === 0 ? 0 : USAGE_ERROR;
      return;
    }
    reportError(error);
    process.exitCode = 1;
  }
}

// A closed pipe (`bonsai tree big.jsonl | head`) is not an error worth a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

await main(process.argv);
