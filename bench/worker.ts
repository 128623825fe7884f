/**
 * One (file, library) measurement in its own process, so peak memory belongs to that library
 * alone. Reads its task from argv as JSON and prints one JSON event per line: `start` before each
 * operation (the parent's watchdog uses it), `result` after it, `memory` after the first open.
 */
import { chmodSync, copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Entry, type Library, loadBonsai, loadReference, type Session } from "./libraries.js";
import { type OpName, WARM_BELOW_MS, type WarmResult, type WorkerEvent, type WorkerTask } from "./protocol.js";

const emit = (e: WorkerEvent) => process.stdout.write(`${JSON.stringify(e)}\n`);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
const maxRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);
const retainedBytes = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
};

/** Keeps results alive so no run is optimized away. */
let sink: unknown;

function repeat(reps: number, capMs: number, run: () => unknown, before?: () => void): number[] {
  const times: number[] = [];
  let total = 0;
  for (let i = 0; i < reps && (i === 0 || total < capMs); i++) {
    before?.();
    gc();
    const t = performance.now();
    sink = run();
    const dt = performance.now() - t;
    times.push(dt);
    total += dt;
  }
  return times;
}

/**
 * The warm protocol, the same for both libraries: up to 200 calls or 300 ms of warm-up (whichever
 * comes first), then one batch of at least 50 calls and at least 200 ms (whichever is later,
 * stopped at 2 s), timed as a whole with no GC between calls, reported per call.
 */
function warmTimes(run: () => unknown): WarmResult {
  const warmupStart = performance.now();
  let warmupCalls = 0;
  while (warmupCalls < 200 && performance.now() - warmupStart < 300) {
    sink = run();
    warmupCalls++;
  }
  const warmupMs = performance.now() - warmupStart;
  let calls = 0;
  let totalMs = 0;
  const start = performance.now();
  while (calls < 50 || totalMs < 200) {
    sink = run();
    calls++;
    totalMs = performance.now() - start;
    if (totalMs > 2000) break;
  }
  return { warmupCalls, warmupMs, calls, totalMs, msPerCall: totalMs / calls };
}

/** Root-first path by parent links, walked here so the reference's quadratic getBranch is not part of setup. */
function pathOf(session: Session, leafId: string | null): Entry[] {
  const path: Entry[] = [];
  const seen = new Set<string>();
  let current = leafId ? session.getEntry(leafId) : undefined;
  while (current && !seen.has(current.id)) {
    seen.add(current.id);
    path.push(current);
    current = current.parentId ? session.getEntry(current.parentId) : undefined;
  }
  return path.reverse();
}

/** Another branch's tip when there is one (the newest entry off the current path), else an entry 50 back on the path. */
function collectTarget(session: Session, path: readonly Entry[]): string | undefined {
  const onPath = new Set(path.map((e) => e.id));
  const entries = session.getEntries();
  for (let i = entries.length - 1; i >= 0; i--) if (!onPath.has(entries[i].id)) return entries[i].id;
  return path[Math.max(0, path.length - 51)]?.id;
}

const WORDS = "the session tree leaf branch entry compaction summary token parser buffer stream file".split(" ");
function appendedMessage(i: number): unknown {
  const text = Array.from({ length: 40 }, (_, k) => WORDS[(i + k * 7) % WORDS.length]).join(" ");
  const timestamp = Date.now();
  switch (i % 3) {
    case 0:
      return { role: "user", content: [{ type: "text", text }], timestamp };
    case 1:
      return {
        role: "assistant",
        content: [{ type: "text", text }],
        api: "anthropic-messages",
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        usage: { input: 1000 + i, output: 50, cacheRead: 0, cacheWrite: 0, totalTokens: 1050 + i },
        stopReason: "stop",
        timestamp,
      };
    default:
      return { role: "toolResult", toolCallId: `call_${i}`, toolName: "read", content: [{ type: "text", text }], isError: false, timestamp };
  }
}

const SETTINGS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 };

async function main(): Promise<void> {
  const task = JSON.parse(process.argv[2]) as WorkerTask;
  const lib: Library = task.lib === "reference" ? await loadReference() : await loadBonsai(task.lib === "bonsai-trusted");
  const want = new Set(task.ops);
  let copies = 0;
  const freshCopy = () => {
    const path = join(task.tmpDir, `${task.lib}-${process.pid}-${copies++}.jsonl`);
    copyFileSync(task.file, path);
    chmodSync(path, 0o644); // the fixtures are read-only; the copies are written to
    return path;
  };
  const dropCopy = (path: string) => rmSync(path, { force: true });

  // Open: every run on a fresh copy (the reference migrates old files in place), memory from the first.
  gc();
  const baseline = maxRssMb();
  const baseRetained = retainedBytes();
  let session: Session | undefined;
  let copy = "";
  const openOnce = (): number => {
    session?.close?.();
    session = undefined;
    if (copy) dropCopy(copy);
    copy = freshCopy();
    gc();
    const t = performance.now();
    session = lib.open(copy);
    return performance.now() - t;
  };
  const openTimes = [openOnce()];
  // peak during the first open, then what stays after a collection
  const openPeak = maxRssMb();
  gc();
  emit({ event: "memory", baselineMaxRssMb: baseline, openPeakRssMb: openPeak, retainedMb: mb(retainedBytes() - baseRetained) });
  if (want.has("open")) {
    let total = openTimes[0];
    while (openTimes.length < task.reps && total < task.capMs) {
      openTimes.push(openOnce());
      total += openTimes[openTimes.length - 1];
    }
  }
  if (!session) throw new Error("open produced no session");
  readOperations(session);
  // The read operations materialize whole sessions (getTree, the full parse): let them go, so
  // the appends below run in a heap of their own size, as they would in an agent.
  session.close?.();
  session = undefined;
  sink = undefined;

  function readOperations(s: Session): void {
    if (want.has("open")) emit({ event: "result", op: "open", ms: openTimes });

    // Operations to time warm once every cold row is measured: a warm-up of one operation also
    // warms the code the next one shares with it, which would leave the later cold rows not cold.
    const warmLater: { op: OpName; run: () => unknown }[] = [];
    const measure = (
      op: OpName,
      run: (() => unknown) | undefined,
      extra?: (result: unknown) => Record<string, number | string>,
      warmable = false,
    ) => {
      if (!want.has(op)) return;
      if (!run) {
        emit({ event: "skip", op, reason: `not available in ${lib.name}` });
        return;
      }
      emit({ event: "start", op });
      try {
        const ms = repeat(task.reps, task.capMs, run);
        emit({ event: "result", op, ms, extra: extra?.(sink) });
        const sorted = [...ms].sort((a, b) => a - b);
        if (task.warm && warmable && sorted[sorted.length >> 1] < WARM_BELOW_MS) warmLater.push({ op, run });
      } catch (error) {
        emit({ event: "error", op, message: (error as Error).message.split("\n")[0] });
      }
    };

    // The context first: with lazily read bodies, its first run is the one that reads them.
    measure("context", () => s.buildSessionContext(), (r) => ({ messages: (r as { messages: unknown[] }).messages.length }), true);

    const leafId = s.getLeafId();
    const path = pathOf(s, leafId);
    let lastCompaction = -1;
    for (let i = path.length - 1; i >= 0; i--) {
      if (path[i].type === "compaction") {
        lastCompaction = i;
        break;
      }
    }
    const target = task.collectTarget ?? collectTarget(s, path);

    const count = (key: string) => (r: unknown) => ({ [key]: Array.isArray(r) ? r.length : -1 });

    measure("branch", () => s.getBranch(), count("entries"), true);
    const cut = lib.findCutPoint;
    measure("cutPoint", cut && (() => cut(path, lastCompaction + 1, path.length, SETTINGS.keepRecentTokens)), undefined, true);
    const lastCompactionOn = (entries: readonly Entry[]) => {
      for (let i = entries.length - 1; i >= 0; i--) if (entries[i].type === "compaction") return i;
      return -1;
    };
    measure(
      "branchCut",
      cut &&
        (() => {
          // what a compaction check does from scratch: the leaf's branch, then the cut
          const branch = s.getBranch();
          return cut(branch, lastCompactionOn(branch) + 1, branch.length, SETTINGS.keepRecentTokens);
        }),
      undefined,
      true,
    );
    const prepare = lib.prepareCompaction;
    measure("prepare", prepare && (() => prepare(path, SETTINGS)), undefined, true);
    const prune = lib.planPruning;
    measure("prune", prune && (() => prune(path)), undefined, true);
    const collect = lib.collectEntriesForBranchSummary;
    measure(
      "collect",
      collect && target ? () => collect(s, leafId, target) : undefined,
      (r) => ({ entries: (r as { entries: unknown[] }).entries.length }),
      true,
    );

    // The warm pass, before getTree and the full parse materialize the whole session.
    for (const { op, run } of warmLater) {
      emit({ event: "start", op });
      try {
        emit({ event: "warm", op, warm: warmTimes(run) });
      } catch (error) {
        // the cold result stands; a failed warm pass only loses the warm row
        process.stderr.write(`${op}, warm: ${(error as Error).message.split("\n")[0]}\n`);
      }
    }

    measure("tree", () => s.getTree());
    measure("fullParse", lib.parseAll && (() => lib.parseAll!(task.file)));

  }

  // Appends: a fresh copy opened for writing, the appends timed and nothing else.
  const appendRun = (op: OpName, n: number, fsyncEachAppend: boolean) => {
    if (!want.has(op)) return;
    if (fsyncEachAppend && lib.name === "reference") {
      emit({ event: "skip", op, reason: "the reference never fsyncs" });
      return;
    }
    const target = freshCopy();
    try {
      const writer = lib.openForWrite(target, { fsyncEachAppend });
      emit({ event: "start", op });
      // several runs of n appends to the same session: later runs append to a longer one
      const runs = fsyncEachAppend ? 1 : Math.min(3, task.reps);
      const ms: number[] = [];
      for (let run = 0; run < runs; run++) {
        gc();
        const t = performance.now();
        for (let i = 0; i < n; i++) writer.appendMessage(appendedMessage(run * n + i));
        ms.push(performance.now() - t);
      }
      writer.close?.();
      const mid = [...ms].sort((a, b) => a - b)[ms.length >> 1];
      emit({ event: "result", op, ms, extra: { appended: n, usPerAppend: Math.round((mid * 1000) / n) } });
    } catch (error) {
      emit({ event: "error", op, message: (error as Error).message.split("\n")[0] });
    } finally {
      dropCopy(target);
      rmSync(`${target}.lock`, { force: true, recursive: true });
    }
  };
  appendRun("append", task.appendCount, false);
  appendRun("appendFsync", task.fsyncAppendCount, true);

  // Turns: what an agent does per turn, on a fresh copy opened for writing: append one message,
  // then build the context of the new leaf. Each turn timed alone, no GC between them; the count
  // is capped by time so a reference that rebuilds whole paths does not run for minutes.
  if (want.has("turn")) {
    emit({ event: "start", op: "turn" }); // before the open: at 1M entries the reference's open is long
    const target = freshCopy();
    try {
      const writer = lib.openForWrite(target);
      gc();
      const ms: number[] = [];
      let total = 0;
      let messages = 0;
      for (let i = 0; i < task.turnCount && (i === 0 || total < task.turnCapMs); i++) {
        const t = performance.now();
        writer.appendMessage(appendedMessage(i));
        const context = writer.buildSessionContext();
        const dt = performance.now() - t;
        messages = context.messages.length;
        ms.push(dt);
        total += dt;
      }
      writer.close?.();
      const sorted = [...ms].sort((a, b) => a - b);
      const h = sorted.length >> 1;
      const mid = sorted.length % 2 ? sorted[h] : (sorted[h - 1] + sorted[h]) / 2;
      emit({
        event: "result",
        op: "turn",
        ms,
        extra: { turns: ms.length, usPerTurn: Math.round(mid * 1000), cappedAtMs: ms.length < task.turnCount ? task.turnCapMs : 0, messages },
      });
    } catch (error) {
      emit({ event: "error", op: "turn", message: (error as Error).message.split("\n")[0] });
    } finally {
      dropCopy(target);
      rmSync(`${target}.lock`, { force: true, recursive: true });
    }
  }

  if (copy) dropCopy(copy);
  emit({ event: "done", peakRssMb: maxRssMb() });
  void sink;
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
