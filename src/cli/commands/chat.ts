/**
 * `bonsai chat`: an interactive agent in the terminal (src/chat/). Everything heavy (pi-tui,
 * pi-ai, pi-agent-core, the AgentSession) is imported inside the action, so the inspection
 * commands never load it.
 */
import type { Command } from "commander";
import { positiveInteger } from "../numeric-options.js";
import type { ChatModelOptions } from "../../chat/model.js";
import { runAction } from "../output.js";

interface ChatOptions extends ChatModelOptions {
  session?: string;
  continue?: boolean;
  allowBash?: boolean;
}

/** The agent's instructions, in our words: where it works and what its tools may touch. */
export function chatSystemPrompt(cwd: string, toolsLine: string, today = new Date()): string {
  return [
    `You are a coding assistant working with a person in the directory ${cwd}.`,
    toolsLine,
    "Read a file before you change it. Use edit for small changes to existing files and write for new files or full rewrites.",
    "Answer briefly and concretely; say what you changed and why.",
    "When older conversation has been summarized and you need a detail the summary does not give, find it with history_search and read it with history_read.",
    `Today is ${today.toISOString().slice(0, 10)}.`,
  ].join("\n");
}

export function register(program: Command): void {
  program
    .command("chat")
    .description("an interactive agent: /compact, /tree, /label, /fork, /session; Escape stops; sessions under ~/.bonsai/sessions or --session")
    .option("--model <provider/id>", "a pi-ai model, e.g. anthropic/claude-sonnet-4-5 (key from the provider's env var; or env BONSAI_MODEL)")
    .option("--base-url <url>", "an OpenAI-compatible server (Ollama, llama.cpp, vLLM), e.g. http://localhost:11434/v1 (or env BONSAI_BASE_URL)")
    .option("--model-id <id>", "model name to request from --base-url")
    .option("--api <api>", "what --base-url speaks: openai-completions (default), openai-responses or anthropic-messages (a gateway or proxy; or env BONSAI_API)")
    .option("--api-key <key>", "API key (default: from the environment)")
    .option("--context-window <n>", "the model's context window in tokens (--base-url default 128000)", positiveInteger)
    .option(
      "--session <location>",
      "open this session: a file, sqlite:PATH#ID or postgres://…#ID (a new session starts there when it does not exist; without #ID, under a new id)",
    )
    .option("-c, --continue", "resume the most recent session file of this directory")
    .option("--allow-bash", "give the model a bash tool: sandboxed by bubblewrap when installed, otherwise it runs with your rights (see docs/chat.md)")
    .action(
      runAction(async (options: ChatOptions) => {
        const cwd = process.cwd();
        const notices: string[] = [];
        const [{ loadCommandSettings }, { openChat }, { createChatTools, describeTools, unsandboxedBashNotice }, { AgentSession }] = await Promise.all([
          import("../command-settings.js"),
          import("../chat-open.js"),
          import("../../chat/tools.js"),
          import("../../agent/agent-session.js"),
        ]);
        // the same settings files every command reads (cli/command-settings.ts)
        const settings = loadCommandSettings({ cwd, onWarning: (message) => notices.push(message) });
        const { manager, resumed, model, apiKey, chatStart } = await openChat(options, cwd, (message) => notices.push(message));
        let failure: { error: unknown } | undefined;
        try {
          const toolOptions = { allowBash: options.allowBash };
          const tools = createChatTools(cwd, toolOptions);
          const unsandboxed = unsandboxedBashNotice(tools);
          if (unsandboxed) notices.push(unsandboxed);
          const session = await AgentSession.create({
            sessionManager: manager,
            model,
            systemPrompt: chatSystemPrompt(cwd, describeTools(cwd, toolOptions)),
            tools,
            recall: true,
            settings,
            getApiKey: () => apiKey,
          });
          const [{ ChatApp }, { FetchFailures }] = await Promise.all([import("../../chat/app.js"), import("../../chat/connection-error.js")]);
          const fetchFailures = new FetchFailures();
          fetchFailures.install();
          const app = new ChatApp({ session, resumed, notices, chatStart, fetchFailures });
          app.start();
          // A closed terminal or a kill still leaves the session closed properly (lock released,
          // queued PostgreSQL writes committed: close() below is awaited before the exit).
          const leave = () => void app.quit();
          process.once("SIGTERM", leave);
          process.once("SIGHUP", leave);
          await app.done;
        } catch (error) {
          failure = { error };
        }
        // Awaited: a PostgreSQL session's writes are queued, and exiting before they are committed
        // would lose them. A write that failed is reported here, once the terminal is back.
        try {
          await manager.close();
        } catch (error) {
          failure ??= { error };
        }
        if (failure) throw failure.error;
        const location = manager.getLocation();
        if (location && manager.getEntries().length > 0) {
          const { savedSessionLines } = await import("../../chat/session-files.js");
          process.stdout.write(`${savedSessionLines(cwd, { file: manager.getSessionFile(), location }).join("\n")}\n`);
        }
        // The model client may keep sockets open; the conversation is over and saved.
        process.exit(0);
      }),
    );
}
