/**
 * The `bonsai` program: every command, each in its own file under commands/, registered here with
 * one line. register() must stay cheap: a command that needs a heavy module (pi-ai, the server)
 * imports it inside its action, so `bonsai info` never pays for it. main.ts runs it; the
 * completion scripts are written from it.
 */
import { Command } from "commander";
import { register as registerChat } from "./commands/chat.js";
import { register as registerCheckout } from "./commands/checkout.js";
import { register as registerCompact } from "./commands/compact.js";
import { register as registerCompletion } from "./commands/completion.js";
import { register as registerContext } from "./commands/context.js";
import { register as registerCopy } from "./commands/copy.js";
import { register as registerEval } from "./commands/eval.js";
import { register as registerExport } from "./commands/export.js";
import { register as registerInfo } from "./commands/info.js";
import { register as registerLabel } from "./commands/label.js";
import { register as registerLs } from "./commands/ls.js";
import { register as registerMigrate } from "./commands/migrate.js";
import { register as registerPin } from "./commands/pin.js";
import { register as registerPrune } from "./commands/prune.js";
import { register as registerServe } from "./commands/serve.js";
import { register as registerSettings } from "./commands/settings.js";
import { register as registerTree } from "./commands/tree.js";
import { register as registerUncompact } from "./commands/uncompact.js";
import { register as registerView } from "./commands/view.js";
import { packageVersion } from "./build-info.js";
import { printJsonError } from "./output.js";

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
  registerPin(program);
  registerMigrate(program);
  registerCheckout(program);
  registerCompact(program);
  registerUncompact(program);
  registerEval(program);
  registerPrune(program);
  registerServe(program);
  registerChat(program);
  registerLs(program);
  registerCopy(program);
  registerExport(program);
  registerView(program);
  registerSettings(program);
  registerCompletion(program);
  program.addHelpText("after", TOP_LEVEL_EXAMPLES);
  return program;
}

