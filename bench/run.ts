/**
 * `npm run bench`: bonsai against the reference (@mariozechner/pi-coding-agent, a devDependency)
 * on the same files in the same run. Each (file, library) pair runs in its own child process so
 * peak memory is that library's alone. Prints a table per file and the section 8 targets, and
 * writes the same as JSON to bench/results/ (latest.json plus a dated copy) and markdown to
 * bench/results/latest.md.
 *
 *   npm run bench                 10k, 100k and 1M entries, linear and branched, plus real fixtures
 *   npm run bench -- --quick      10k and the real fixtures only, written to quick-latest.json
 *   npm run bench -- --sizes 10k,100k --only branched --no-write
 */
import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { basename, join, resolve } from "node:path";
import { generateSession } from "./generate.js";
import { measureQuality, qualityMarkdown, renderQuality } from "./quality.js";
import {
  type BenchFile,
  checkTargets,
  type FileRun,
  fileTable,
  formatMs,
  growth,
  type LibraryRun,
  median,
  OP_LABELS,
  renderMarkdown,
  renderText,
  summaryMarkdown,
} from "./report.js";
import { OPS, type OpName, WARM_BELOW_MS, type WorkerEvent, type WorkerTask } from "./protocol.js";

const ROOT = resolve(import.meta.dirname, "..");
const REAL_DIR = resolve(ROOT, "test/fixtures/real");
const WORKER = join(import.meta.dirname, "worker.ts");

interface Options {
  sizes: number[];
  shapes: ("linear" | "branched")[];
  real: boolean;
  write: boolean;
  quick: boolean;
  only?: string;
}

function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim());
  if (!m) throw new Error(`bad size "${text}": use a number like 10000, 10k or 1m`);
  return Math.round(Number(m[1]) * (m[2].toLowerCase() === "m" ? 1e6 : m[2].toLowerCase() === "k" ? 1e3 : 1));
}

function parseArgs(argv: string[]): Options {
  const options: Options = { sizes: [10_000, 100_000, 1_000_000], shapes: ["linear", "branched"], real: true, write: true, quick: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === "--quick") {
      options.quick = true;
      options.sizes = [10_000];
    } else if (arg === "--sizes") options.sizes = value().split(",").map(parseSize);
    else if (arg === "--only") options.only = value();
    else if (arg === "--no-real") options.real = false;
    else if (arg === "--no-write") options.write = false;
    else throw new Error(`unknown option ${arg}; see the comment at the top of bench/run.ts`);
  }
  return options;
}

const label = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));

/** Repetitions per size: fewer for big files, whose single runs are long and stable. */
const repsFor = (entries: number) => (entries >= 500_000 ? 3 : entries >= 50_000 ? 5 : 7);
/** An operation stops repeating after this much time, and is skipped when a linear extrapolation from the previous size exceeds it. */
const OP_CAP_MS = 15_000;
/** A single run longer than this is stopped (the worker is killed and restarted for the rest). */
const OP_TIMEOUT_MS = 60_000;
const OPEN_TIMEOUT_MS = 180_000;
/** Turns per (file, library), and the time after which no further turn starts (the reference rebuilds whole paths at 100k and 1M). */
const TURN_COUNT = 200;
const TURN_CAP_MS = 8_000;

interface PreparedFile {
  file: BenchFile;
  path: string;
  collectTarget?: string;
}

function realFixtures(): PreparedFile[] {
  if (!existsSync(REAL_DIR)) return [];
  return readdirSync(REAL_DIR)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .map((f) => {
      const path = join(REAL_DIR, f);
      const text = readFileSync(path, "utf8");
      const entries = text.split("\n").filter((l) => l.trim() !== "").length - 1;
      return { path, file: { name: `real: ${basename(f, ".jsonl")}`, shape: "real" as const, entries, bytes: statSync(path).size } };
    });
}

/** Runs one worker; restarts it after a timeout with the operations that are left. */
async function runLibrary(task: Omit<WorkerTask, "ops">, ops: OpName[], skips: Map<OpName, string>): Promise<LibraryRun> {
  const run: LibraryRun = { ops: {}, wallMs: 0 };
  for (const [op, reason] of skips) run.ops[op] = { status: "skipped", note: reason };
  let pending = ops.filter((op) => !skips.has(op));
  const started = performance.now();
  let attempts = 0;
  while (pending.length > 0 && attempts++ < ops.length + 1) {
    const outcome = await spawnWorker({ ...task, ops: pending }, run);
    pending = pending.filter((op) => run.ops[op] === undefined);
    if (outcome.timedOut) {
      run.ops[outcome.timedOut] = { status: "timeout", note: `a single run took more than ${OP_TIMEOUT_MS / 1000} s (≥ ${OP_TIMEOUT_MS / 1000} s); stopped` };
      pending = pending.filter((op) => op !== outcome.timedOut);
    } else if (outcome.crashed) {
      run.crashed = outcome.crashed;
      for (const op of pending) run.ops[op] = { status: "error", note: outcome.crashed };
      break;
    } else break;
  }
  run.wallMs = performance.now() - started;
  return run;
}

function spawnWorker(task: WorkerTask, run: LibraryRun): Promise<{ timedOut?: OpName; crashed?: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--expose-gc", WORKER, JSON.stringify(task)], {
      cwd: ROOT,
      // every open here is of a fresh copy: measured without the open index (bench/against-pi.ts measures it)
      env: { ...process.env, BONSAI_INDEX: "off" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let current: OpName | "open" = "open";
    let timedOut: OpName | undefined;
    let stderr = "";
    let buffered = "";
    const arm = (ms: number) => setTimeout(() => {
      timedOut = current === "open" ? "open" : current;
      child.kill("SIGKILL");
    }, ms);
    let timer = arm(OPEN_TIMEOUT_MS);
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout.on("data", (d: Buffer) => {
      buffered += d.toString();
      let nl = buffered.indexOf("\n");
      while (nl !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        nl = buffered.indexOf("\n");
        if (!line.trim()) continue;
        const event = JSON.parse(line) as WorkerEvent;
        switch (event.event) {
          case "start":
            clearTimeout(timer);
            current = event.op;
            timer = arm(OP_TIMEOUT_MS);
            break;
          case "result":
            run.ops[event.op] = { status: "ok", ms: event.ms, median: median(event.ms), extra: event.extra };
            break;
          case "warm": {
            const result = run.ops[event.op];
            if (result?.status === "ok") result.warm = event.warm;
            break;
          }
          case "skip":
            run.ops[event.op] = { status: "skipped", note: event.reason };
            break;
          case "error":
            run.ops[event.op] = { status: "error", note: event.message };
            break;
          case "memory":
            run.memory ??= { baselineMaxRssMb: event.baselineMaxRssMb, openPeakRssMb: event.openPeakRssMb, retainedMb: event.retainedMb };
            break;
          case "done":
            run.peakRssMb = Math.max(run.peakRssMb ?? 0, event.peakRssMb);
            break;
        }
      }
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (timedOut) done({ timedOut });
      else if (code !== 0) done({ crashed: `worker exited with ${signal ?? code}: ${stderr.trim().split("\n").slice(-3).join(" / ")}` });
      else done({});
    });
  });
}

/**
 * Operations that would run past the cap at this size, estimated from the two previous sizes of
 * the same shape: the time grows like entries^k, with k measured between them (at least 1), so a
 * quadratic operation is not started at 1M just because it was fast at 100k.
 */
function predictedSkips(earlier: readonly FileRun[], file: BenchFile, lib: "bonsai" | "reference"): Map<OpName, string> {
  const skips = new Map<OpName, string>();
  const previous = earlier[earlier.length - 1];
  if (!previous) return skips;
  const before = earlier[earlier.length - 2];
  for (const [op, result] of Object.entries(previous[lib].ops) as [OpName, LibraryRun["ops"][OpName]][]) {
    if (op === "open" || op === "append" || op === "appendFsync" || !result) continue;
    if (result.status === "timeout" || (result.status === "skipped" && result.note?.startsWith("≥"))) {
      skips.set(op, `≥ ${OP_TIMEOUT_MS / 1000} s: already over the limit at ${label(previous.file.entries)}`);
      continue;
    }
    if (result.status !== "ok" || result.median === undefined) continue;
    let exponent = 1;
    const older = before?.[lib].ops[op];
    if (older?.status === "ok" && older.median && older.median >= 1) {
      exponent = Math.max(1, Math.log(result.median / older.median) / Math.log(previous.file.entries / before.file.entries));
    }
    const estimate = result.median * (file.entries / previous.file.entries) ** exponent;
    if (estimate > OP_CAP_MS) {
      const how = exponent > 1.05 ? `grown as entries^${exponent.toFixed(1)}, as from ${label(before.file.entries)}` : "grown linearly";
      skips.set(op, `≥ ${(estimate / 1000).toFixed(0)} s estimated (${formatMs(result.median)} at ${label(previous.file.entries)}, ${how}); not run`);
    }
  }
  return skips;
}

function gitCommit(): string | undefined {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  } catch {
    return undefined;
  }
}

/** Files under src/ that differ from the commit: the workers import the working tree, so the commit alone would not say what was measured. */
function uncommittedSource(): string[] {
  try {
    const out = execFileSync("git", ["status", "--porcelain", "--", "src"], { cwd: ROOT, encoding: "utf8" });
    return out.split("\n").filter((l) => l.trim() !== "").map((l) => l.slice(3));
  } catch {
    return [];
  }
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const tmp = mkdtempSync(join(tmpdir(), "bonsai-bench-"));
  const cleanup = () => rmSync(tmp, { recursive: true, force: true });
  process.on("SIGINT", () => {
    cleanup();
    process.exit(130);
  });
  const runs: FileRun[] = [];
  const began = performance.now();
  const dirtyAtStart = uncommittedSource();
  if (dirtyAtStart.length > 0) console.log(`note: the workers import the working tree, which has uncommitted changes to ${dirtyAtStart.join(", ")}`);
  const loadBefore = loadavg()[0];
  if (loadBefore > cpus().length * 0.5) {
    console.log(`note: load average ${loadBefore.toFixed(1)} on ${cpus().length} cores; other work will add noise to these timings`);
  }
  try {
    const files: PreparedFile[] = options.real ? realFixtures() : [];
    if (options.real && files.length === 0) console.log(`no real fixtures found in ${REAL_DIR}; generated sessions only`);
    for (const size of [...options.sizes].sort((a, b) => a - b)) {
      for (const shape of options.shapes) {
        const path = join(tmp, `${shape}-${label(size)}.jsonl`);
        const t = performance.now();
        const g = generateSession(path, { entries: size, branched: shape === "branched" });
        console.log(`generated ${shape} ${label(size)}: ${(g.bytes / 1e6).toFixed(1)} MB in ${formatMs(performance.now() - t)}`);
        files.push({
          path,
          collectTarget: g.collectTargetId,
          file: { name: `${shape} ${label(size)}`, shape, entries: g.entries, bytes: g.bytes, pathLength: g.pathLength, compactions: g.compactions },
        });
      }
    }
    const selected = files.filter((f) => !options.only || f.file.name.includes(options.only));
    for (const prepared of selected) {
      const { file } = prepared;
      const earlier = runs.filter((r) => r.file.shape === file.shape && r.file.entries < file.entries);
      const base = {
        file: prepared.path,
        tmpDir: tmp,
        reps: repsFor(file.entries),
        capMs: OP_CAP_MS,
        appendCount: 10_000,
        fsyncAppendCount: 200,
        turnCount: TURN_COUNT,
        turnCapMs: TURN_CAP_MS,
        collectTarget: prepared.collectTarget,
      };
      const ops = [...OPS];
      process.stdout.write(`measuring ${file.name} ... `);
      const bonsai = await runLibrary({ ...base, lib: "bonsai", warm: true }, ops, predictedSkips(earlier, file, "bonsai"));
      const trusted = await runLibrary({ ...base, lib: "bonsai-trusted", warm: false }, ["open", "context"], new Map());
      const reference = await runLibrary({ ...base, lib: "reference", warm: true }, ops, predictedSkips(earlier, file, "reference"));
      console.log(`bonsai ${formatMs(bonsai.wallMs + trusted.wallMs)}, reference ${formatMs(reference.wallMs)}`);
      const run: FileRun = { file, bonsai, reference, trusted };
      runs.push(run);
      console.log(`\n${renderText(fileTable(run))}\n`);
    }
  } finally {
    cleanup();
  }

  const quality = await measureQuality();
  console.log(`\n${renderQuality(quality)}\n`);
  const targets = checkTargets(runs);
  const growths = growth(runs);
  console.log("Targets (DESIGN.md section 8)");
  for (const t of targets) console.log(`  ${t.met ? "met   " : "MISSED"} ${t.target.padEnd(32)} ${t.file.padEnd(40)} ${t.value}`);
  const steep = growths.filter((g) => g.exponent > 1.15);
  console.log(`\nGrowth of bonsai's times with session size (exponent 1 = linear; appends and turns: per entry and per turn, 0 = constant)`);
  for (const g of growths) {
    const flag = g.exponent > 1.15 ? "  <-- grows faster than the session" : "";
    console.log(`  ${g.shape.padEnd(9)} ${OP_LABELS[g.op].padEnd(36)} ${label(g.from)}->${label(g.to)}  ${g.exponent.toFixed(2)}  (${formatMs(g.fromMs)} -> ${formatMs(g.toMs)})${flag}`);
  }
  if (steep.length === 0 && growths.length > 0) console.log("  nothing grows faster than the session");
  console.log(`\ntotal ${formatMs(performance.now() - began)}`);

  const result = {
    date: new Date().toISOString(),
    commit: gitCommit(),
    /** src/ files that differed from the commit, at the start or the end of the run */
    uncommittedSrc: [...new Set([...dirtyAtStart, ...uncommittedSource()])],
    node: process.version,
    cpu: `${cpus()[0]?.model ?? "unknown"} x${cpus().length}`,
    memoryGb: Math.round(totalmem() / 1024 ** 3),
    loadAverage: { before: loadBefore, after: loadavg()[0] },
    reference: "@mariozechner/pi-coding-agent@0.73.1",
    fsyncPolicy:
      "appends: one write() per entry, no fsync per append in either library (bonsai syncs on close(); fsyncEachAppend is measured separately); the reference opens, appends and closes the file per entry and never fsyncs",
    options,
    runs,
    targets,
    growth: growths,
    quality,
  };
  const summary = summaryMarkdown(runs);
  console.log(`\nSummary\n${summary}\n`);
  const markdown = [
    `Measured ${result.date.slice(0, 10)} on ${result.cpu}, Node ${result.node}, commit ${result.commit ?? "?"}${result.uncommittedSrc.length > 0 ? ` plus uncommitted changes to ${result.uncommittedSrc.join(", ")}` : ""}, load average ${loadBefore.toFixed(1)}; reference = ${result.reference}. Times are medians; ratios are reference / bonsai (higher is better for bonsai).`,
    "",
    `Two regimes, the same protocol for both libraries. Cold: the first call, and the median of 3 to 7 calls with a full GC before each (mostly unoptimized code for sub-millisecond operations). Warm: read operations whose cold median is under ${WARM_BELOW_MS} ms are then called up to 200 times or 300 ms as a warm-up, and a batch of at least 50 calls and 200 ms (no GC between calls) is timed per call. A turn is what an agent does each turn: append one message, then build the new leaf's context, up to ${TURN_COUNT} turns (fewer after ${TURN_CAP_MS / 1000} s) on a fresh copy opened for writing; the median turn is shown.`,
    "",
    summary,
    "",
    qualityMarkdown(quality),
    "",
    ...runs.map((r) => `${renderMarkdown(fileTable(r))}\n`),
  ].join("\n");
  if (options.write) {
    const dir = join(ROOT, "bench/results");
    mkdirSync(dir, { recursive: true });
    const json = `${JSON.stringify(result, null, 2)}\n`;
    if (options.quick || options.only) {
      writeFileSync(join(dir, "quick-latest.json"), json);
    } else {
      writeFileSync(join(dir, `${result.date.slice(0, 16).replace(/:/g, "-")}.json`), json);
      writeFileSync(join(dir, "latest.json"), json);
      writeFileSync(join(dir, "latest.md"), markdown);
    }
    console.log(`results written to ${dir}`);
  }
}

main().catch((error) => {
  console.error(`bench failed: ${(error as Error).message}`);
  process.exit(1);
});
