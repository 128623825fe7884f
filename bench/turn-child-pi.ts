/**
 * pi 1.6.0's side of `bench/turn-cost.ts`, run on Node 22: the session work pi's AgentSession
 * does around each reply (agent-session.js), timed per turn on the same generated session. It
 * appends the user's and the assistant's message (`appendMessage`), builds the session
 * projection for the compaction check (`buildSessionProjection`), and walks the branch twice
 * (`getBranch`: the latest compaction, and the assistant's place in the branch). pi's model call
 * and the rest of its agent are left out, as the scripted model leaves bonsai's out. Prints
 * {times, rssAfterOpenMb, rssAfterTurnsMb} as JSON.
 *
 *   node bench/turn-child-pi.ts '{"module":"…/session-manager.js","file":"…","turns":100}'
 */
import { pathToFileURL } from "node:url";
import { cpuMs, peakRssMb } from "./reference-agents.js";

interface PiSession {
  appendMessage(message: unknown): string;
  buildSessionProjection(): unknown;
  getBranch(): unknown[];
}

const task = JSON.parse(process.argv[2]) as { module: string; file: string; turns: number };
const { SessionManager } = (await import(pathToFileURL(task.module).href)) as { SessionManager: { open(file: string): PiSession } };
const session = SessionManager.open(task.file);
(globalThis as { gc?: () => void }).gc?.();
const rssAfterOpenMb = peakRssMb();
const usage = { input: 60_000, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 60_002, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const times: number[] = [];
for (let i = 0; i < task.turns; i++) {
  const start = process.cpuUsage();
  session.appendMessage({ role: "user", content: [{ type: "text", text: `turn ${i}: go on` }], timestamp: Date.now() });
  session.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], api: "faux", provider: "faux", model: "bench", usage, stopReason: "stop", timestamp: Date.now() });
  session.buildSessionProjection();
  session.getBranch();
  session.getBranch();
  times.push(cpuMs(start));
}
process.stdout.write(`${JSON.stringify({ times, rssAfterOpenMb, rssAfterTurnsMb: peakRssMb() })}\n`);
