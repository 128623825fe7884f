/**
 * Synthetic session files for the benchmark: v3 sessions shaped like the ones pi writes (user
 * turns, assistant tool calls, tool results, model and thinking changes, labels, custom entries,
 * compactions every few thousand entries), either linear or branched. Deterministic for a seed,
 * so two bench runs measure the same bytes. Files go to a temp dir, never into the repo.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { seededRandom } from "../src/util/seeded-random.js";

const WORDS = (
  "the a session entry tree leaf branch compaction summary token budget parser buffer stream " +
  "file read write edit function class interface const let return await async import export " +
  "module config setting request response client server handler layer error fix refactor test " +
  "index cache value type default promise path node child parent label model context window"
).split(" ");

const TOOLS = ["read", "bash", "edit", "write", "grep"];

export interface GenerateOptions {
  entries: number;
  /** branches off earlier entries now and then, with branch summaries */
  branched: boolean;
  seed?: number;
  /** a compaction every this many entries along the current path (default 5000; Infinity: never) */
  compactEvery?: number;
  /** how many times more words each text has (default 1, about 500 bytes an entry; 4 is about 2 KB, like pi sessions with tool output) */
  scale?: number;
}

export interface GeneratedSession {
  path: string;
  entries: number;
  bytes: number;
  leafId: string;
  /** entries on the path from the root to the leaf */
  pathLength: number;
  compactions: number;
  branchPoints: number;
  /** where a navigation would go: the newest abandoned branch tip, or 50 entries back on a linear path */
  collectTargetId: string;
}

interface Writer {
  line(value: unknown): void;
  close(): number;
}

function fileWriter(path: string): Writer {
  const fd = openSync(path, "w");
  let pending = "";
  let bytes = 0;
  const drain = () => {
    const data = Buffer.from(pending, "utf8");
    bytes += data.length;
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off);
    pending = "";
  };
  return {
    line(value) {
      pending += `${JSON.stringify(value)}\n`;
      if (pending.length > 1 << 20) drain();
    },
    close() {
      drain();
      closeSync(fd);
      return bytes;
    },
  };
}

/** Writes a synthetic session to `path`. */
export function generateSession(path: string, options: GenerateOptions): GeneratedSession {
  const random = seededRandom(options.seed ?? 7);
  const compactEvery = options.compactEvery ?? 5000;
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const scale = options.scale ?? 1;
  const words = (n: number) => {
    const out: string[] = [];
    for (let i = 0; i < n * scale; i++) out.push(pick(WORDS));
    return out.join(" ");
  };
  const taken = new Set<string>();
  const newId = () => {
    for (;;) {
      const id = Math.floor(random() * 0x100000000)
        .toString(16)
        .padStart(8, "0");
      if (!taken.has(id)) {
        taken.add(id);
        return id;
      }
    }
  };

  const out = fileWriter(path);
  let clock = Date.UTC(2026, 0, 1);
  const start = new Date(clock).toISOString();
  out.line({ type: "session", version: 3, id: "0194f000-0000-7000-8000-000000000001", timestamp: start, cwd: "/home/user/project" });

  // the current branch, root first: ids and whether the entry is a user message (a valid cut target)
  const path_: { id: string; user: boolean }[] = [];
  let written = 0;
  let sinceCompaction = 0;
  let compactions = 0;
  let branchPoints = 0;
  let lastId = "";
  let abandonedTip = "";
  const emit = (type: string, fields: Record<string, unknown>, user = false) => {
    clock += int(50, 4000);
    const id = newId();
    const parentId = path_.length > 0 ? path_[path_.length - 1].id : null;
    out.line({ type, id, parentId, timestamp: new Date(clock).toISOString(), ...fields });
    path_.push({ id, user });
    written++;
    sinceCompaction++;
    lastId = id;
    return id;
  };
  const room = () => written < options.entries;

  emit("model_change", { provider: "anthropic", modelId: "claude-sonnet-4-5" });
  if (room()) emit("thinking_level_change", { thinkingLevel: "medium" });

  while (room()) {
    // one user turn: a prompt, a few tool round trips, a closing answer
    emit("message", { message: { role: "user", content: [{ type: "text", text: words(int(5, 30)) }], timestamp: clock } }, true);
    const rounds = int(0, 6);
    for (let r = 0; r < rounds && room(); r++) {
      const callId = `toolu_${newId()}${newId()}`;
      const tool = pick(TOOLS);
      emit("message", {
        message: {
          role: "assistant",
          content: [
            { type: "text", text: words(int(3, 20)) },
            { type: "toolCall", id: callId, name: tool, arguments: { path: `src/${pick(WORDS)}/${pick(WORDS)}.ts` } },
          ],
          api: "anthropic-messages",
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          usage: { input: int(1000, 90000), output: int(10, 2000), cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
          stopReason: "toolUse",
          timestamp: clock,
        },
      });
      if (!room()) break;
      // tool output: mostly short, sometimes a long file listing
      const long = random() < 0.02;
      emit("message", {
        message: {
          role: "toolResult",
          toolCallId: callId,
          toolName: tool,
          content: [{ type: "text", text: words(long ? int(200, 700) : int(5, 50)) }],
          isError: random() < 0.03,
          timestamp: clock,
        },
      });
    }
    if (!room()) break;
    emit("message", {
      message: {
        role: "assistant",
        content: [{ type: "text", text: words(int(5, 40)) }],
        api: "anthropic-messages",
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        usage: { input: int(1000, 90000), output: int(10, 2000), cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
        stopReason: "stop",
        timestamp: clock,
      },
    });

    const dice = random();
    if (dice < 0.02 && room()) emit("thinking_level_change", { thinkingLevel: pick(["off", "low", "medium", "high"]) });
    else if (dice < 0.03 && room()) emit("model_change", { provider: "anthropic", modelId: pick(["claude-sonnet-4-5", "claude-opus-4-1"]) });
    else if (dice < 0.05 && room() && path_.length > 2) emit("label", { targetId: path_[int(0, path_.length - 2)].id, label: words(2) });
    else if (dice < 0.06 && room()) emit("custom", { customType: "bench.state", data: { n: written } });
    else if (dice < 0.065 && room()) {
      emit("custom_message", { customType: "bench.note", content: words(int(5, 20)), display: true });
    }

    if (sinceCompaction >= compactEvery && room()) {
      // keep the last few user turns, as a compaction would
      let kept = path_.length - 1;
      for (let seen = 0; kept > 0 && seen < 3; kept--) if (path_[kept].user) seen++;
      while (kept < path_.length - 1 && !path_[kept].user) kept++;
      emit("compaction", {
        summary: `## Goal\n${words(int(60, 200))}\n\n## Progress\n${words(int(60, 200))}`,
        firstKeptEntryId: path_[kept].id,
        tokensBefore: int(100000, 180000),
        details: { readFiles: [`src/${pick(WORDS)}.ts`], modifiedFiles: [] },
      });
      sinceCompaction = 0;
      compactions++;
    }

    if (options.branched && random() < 0.03 && path_.length > 20 && room()) {
      // go back a few turns and try again, sometimes leaving a summary of what was abandoned
      const back = int(2, Math.min(400, path_.length - 2));
      abandonedTip = path_[path_.length - 1].id;
      path_.length -= back;
      branchPoints++;
      if (random() < 0.5 && room()) {
        emit("branch_summary", { fromId: path_[path_.length - 1].id, summary: words(int(20, 120)) });
      }
    }
  }
  const bytes = out.close();
  return {
    path,
    entries: written,
    bytes,
    leafId: lastId,
    pathLength: path_.length,
    compactions,
    branchPoints,
    collectTargetId: abandonedTip || path_[Math.max(0, path_.length - 51)].id,
  };
}
