/**
 * Shared setup of the `bonsai chat` end-to-end tests: a temp home (BONSAI_DIR and HOME point
 * into it, so no real settings or sessions are touched), a temp working directory with optional
 * project settings, the scripted model server, and reading back the session file.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SettingsInput } from "../../src/config/settings.js";
import { type ChatRequest, type ScriptedReply, type ScriptedServer, startScriptedServer, systemText } from "./sse-server.js";
import { ChatTerminal } from "./terminal.js";

export interface ChatWorld {
  home: string;
  cwd: string;
  bonsaiDir: string;
  server: ScriptedServer;
  terminals: ChatTerminal[];
  start(args?: string[]): ChatTerminal;
  sessionFiles(): string[];
  entries(file?: string): { type: string; customType?: string; [key: string]: unknown }[];
  cleanup(): Promise<void>;
}

export type RequestKind = "chat" | "compaction" | "branch";

/** What a request to the scripted server is: the agent's turn, a compaction summary, or a branch summary. */
export function requestKind(request: ChatRequest): RequestKind {
  const system = systemText(request);
  if (system.startsWith("You condense")) return "compaction";
  if (system.startsWith("You write summaries")) return "branch";
  return "chat";
}

/** The text of a request's last message (the user's words, or a tool result). */
export function lastText(request: ChatRequest): string {
  const last = request.messages[request.messages.length - 1];
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
}

export async function chatWorld(
  respond: (request: ChatRequest, kind: RequestKind, index: number) => ScriptedReply,
  settings?: SettingsInput,
): Promise<ChatWorld> {
  const home = mkdtempSync(join(tmpdir(), "bonsai-chat-home-"));
  const cwd = mkdtempSync(join(tmpdir(), "bonsai-chat-cwd-"));
  const bonsaiDir = join(home, ".bonsai");
  if (settings) {
    mkdirSync(join(cwd, ".bonsai"), { recursive: true });
    writeFileSync(join(cwd, ".bonsai", "settings.json"), JSON.stringify(settings));
  }
  // Usage as a real server reports it: the prompt's size, unless the test says otherwise.
  const server = await startScriptedServer((request, index) => {
    const reply = respond(request, requestKind(request), index);
    if ("text" in reply && reply.promptTokens === undefined) return { ...reply, promptTokens: Math.ceil(JSON.stringify(request.messages).length / 4) };
    return reply;
  });
  const terminals: ChatTerminal[] = [];
  const sessionDir = () => {
    const root = join(bonsaiDir, "sessions");
    const dirs = readdirSync(root);
    if (dirs.length !== 1) throw new Error(`expected one session directory in ${root}, found ${dirs.join(", ")}`);
    return join(root, dirs[0]);
  };
  const world: ChatWorld = {
    home,
    cwd,
    bonsaiDir,
    server,
    terminals,
    start(args = []) {
      const terminal = ChatTerminal.start({
        cwd,
        args: ["--base-url", server.baseUrl, "--model-id", "scripted", ...args],
        env: { HOME: home, BONSAI_DIR: bonsaiDir },
      });
      terminals.push(terminal);
      return terminal;
    },
    sessionFiles() {
      const dir = sessionDir();
      return readdirSync(dir)
        .filter((f) => f.endsWith(".jsonl"))
        .map((f) => join(dir, f));
    },
    entries(file) {
      const path = file ?? world.sessionFiles()[0];
      return readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .slice(1)
        .map((line) => JSON.parse(line));
    },
    async cleanup() {
      await Promise.all(terminals.map((terminal) => terminal.kill()));
      await server.close();
      rmSync(home, { recursive: true, force: true });
      rmSync(cwd, { recursive: true, force: true });
    },
  };
  return world;
}

/** A long answer, so a few turns give a compaction something to summarize. */
export const longText = (topic: string, sentences = 60) =>
  Array.from({ length: sentences }, (_, i) => `Point ${i + 1} about ${topic} is worth writing down in full.`).join(" ");

/** Asks "tell me about the X" for each topic in turn, each time waiting for the answer's `[done-X]` (topicAnswer). */
export async function askAbout(chat: ChatTerminal, topics: readonly string[]): Promise<void> {
  for (const topic of topics) {
    chat.submit(`tell me about the ${topic}`);
    await chat.waitFor(`[done-${topic}]`);
  }
}

/** The scripted model's answer to "tell me about the X": a long text about X that ends with `[done-X]`. */
export function topicAnswer(request: ChatRequest): { text: string } {
  const topic = /about the (\w+)/.exec(lastText(request))?.[1] ?? "nothing";
  return { text: `${longText(topic)} [done-${topic}]` };
}
