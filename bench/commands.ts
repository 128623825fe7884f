/**
 * `npm run bench:commands` (and the end of `npm run bench`): the commands around a session,
 * bonsai against pi 1.6.0 (Node 22, from `npm run oracle:install`), both on Node 22, in one run:
 *
 * - export of the compacted 52k-entry session (about 100 MB) to one HTML page: bonsai's
 *   `export --html`, bounded to its default 20 MiB, against pi's `exportFromFile` (unbounded);
 *   first with what each compaction dropped still to be found, then again with it kept by the
 *   first export (pi does the same work both times);
 * - tree of that session: bonsai's `tree` (every row printed) against what pi's /tree needs
 *   (the session opened and its tree built: pi has no tree command);
 * - listing a folder of sessions: bonsai's `ls` against pi's `SessionManager.listAll`.
 *
 * Each run is a fresh process (`bench/command-child.ts`) with its modules loaded before the clock
 * starts; the implementations alternate round by round and the figure is CPU time. Ratios are
 * pi / bonsai (above 1: bonsai faster), the median over rounds with the lowest and highest.
 * Writes bench/results/commands.{json,md}.
 *
 *   npm run bench:commands -- --rounds 5
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSession } from "./generate.js";
import { publish, ratioText } from "./publish.js";
import { NODE22, PI16, ROOT } from "./reference-agents.js";
import { median } from "./report.js";

const CHILD = join(import.meta.dirname, "command-child.ts");

type Op = "export" | "tree" | "ls";
type Lib = "bonsai" | "pi";

interface ChildResult {
  ms: number;
  rssMb: number;
}


function runChild(lib: Lib, op: Op, target: string, out: string, env: NodeJS.ProcessEnv): ChildResult {
  const task = JSON.stringify({ lib, op, target, out });
  const stdout = execFileSync(NODE22, ["--import", "tsx", CHILD, task], { cwd: ROOT, env: { ...process.env, ...env }, encoding: "utf8", maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split("\n").pop()!) as ChildResult;
}

function main(): void {
  const argv = process.argv.slice(2);
  const roundsAt = argv.indexOf("--rounds");
  const rounds = roundsAt >= 0 ? Number(argv[roundsAt + 1]) : 3;
  if (!existsSync(NODE22) || !existsSync(PI16)) {
    console.log(`skipped the commands against pi 1.6.0: ${existsSync(NODE22) ? PI16 : NODE22} is missing (npm run oracle:install)`);
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), "bonsai-commands-"));
  const env = { BONSAI_INDEX_DIR: join(tmp, "index") };
  try {
    const folder = join(tmp, "sessions");
    mkdirSync(folder);
    const big = join(folder, "compacted-52k.jsonl");
    generateSession(big, { entries: 52_000, branched: false, scale: 11, compactEvery: 5000 });
    generateSession(join(folder, "never-compacted-10k.jsonl"), { entries: 10_000, branched: false, scale: 11, compactEvery: Number.POSITIVE_INFINITY });
    for (let i = 0; i < 20; i++) generateSession(join(folder, `small-${i}.jsonl`), { entries: 500, branched: i % 2 === 0, scale: 11, seed: i + 1 });
    const folderMb = ["compacted-52k", "never-compacted-10k"].reduce((n, f) => n + statSync(join(folder, `${f}.jsonl`)).size, 0) / 1e6;
    // pi reads its own copy: it may rewrite a file it opens
    const piCopy = join(tmp, "pi-52k.jsonl");
    copyFileSync(big, piCopy);
    // what each compaction dropped and each message's digest are kept beside the open index by the
    // first export (storage/derived-cache.ts, view/entry-digest.ts); a first run has neither
    const forget = (...kinds: string[]) => () => {
      for (const name of existsSync(env.BONSAI_INDEX_DIR) ? readdirSync(env.BONSAI_INDEX_DIR) : []) {
        if (kinds.some((kind) => name.endsWith(`.${kind}.json`))) rmSync(join(env.BONSAI_INDEX_DIR, name));
      }
    };
    const exportOnce = () => runChild("bonsai", "export", big, join(tmp, "bonsai.html"), env);
    const cases: { op: Op; name: string; target: Record<Lib, string>; before?: () => void; warm?: () => void }[] = [
      {
        op: "export",
        name: `export to HTML, compacted 52k (${(statSync(big).size / 1e6).toFixed(0)} MB), first: what each compaction dropped and each message's digest worked out`,
        target: { bonsai: big, pi: piCopy },
        before: forget("drops", "digests"),
      },
      {
        op: "export",
        name: "export again: both kept from the first",
        target: { bonsai: big, pi: piCopy },
        warm: exportOnce,
      },
      { op: "tree", name: "tree, the same session, first: every body read", target: { bonsai: big, pi: piCopy }, before: forget("digests") },
      { op: "tree", name: "tree after an export: the digests it kept read instead of the bodies", target: { bonsai: big, pi: piCopy }, warm: exportOnce },
      { op: "ls", name: `list a folder of 22 sessions (${folderMb.toFixed(0)} MB and 20 small)`, target: { bonsai: folder, pi: folder } },
    ];
    runChild("bonsai", "tree", big, "", env); // writes the open index, as any earlier use of the session would
    const results: Record<string, unknown>[] = [];
    const lines = ["| command | bonsai | pi 1.6.0 | pi 1.6.0 / bonsai | peak memory, bonsai / pi |", "|---|---:|---:|---:|---:|"];
    for (const c of cases) {
      const seen: Record<Lib, ChildResult[]> = { bonsai: [], pi: [] };
      c.warm?.();
      for (let round = 0; round < rounds; round++) {
        const order: Lib[] = round % 2 === 0 ? ["bonsai", "pi"] : ["pi", "bonsai"];
        for (const lib of order) {
          if (lib === "bonsai") c.before?.();
          seen[lib].push(runChild(lib, c.op, c.target[lib], join(tmp, `${lib}.html`), env));
        }
      }
      const ratios = seen.pi.map((p, i) => p.ms / seen.bonsai[i].ms);
      const memory = median(seen.bonsai.map((r) => r.rssMb)) / median(seen.pi.map((r) => r.rssMb));
      const row = { command: c.name, bonsaiMs: median(seen.bonsai.map((r) => r.ms)), piMs: median(seen.pi.map((r) => r.ms)), piOverBonsai: ratios, memoryBonsaiOverPi: memory };
      if (c.op === "export") Object.assign(row, { bonsaiBytes: statSync(join(tmp, "bonsai.html")).size, piBytes: statSync(join(tmp, "pi.html")).size });
      results.push(row);
      const line = `| ${c.name} | ${row.bonsaiMs.toFixed(0)} ms | ${row.piMs.toFixed(0)} ms | **${ratioText(ratios)}** | ${memory.toFixed(2)} |`;
      lines.push(line);
      console.log(line);
    }
    const exported = results[0] as { bonsaiBytes: number; piBytes: number };
    const md = [
      `# bonsai against pi 1.6.0: commands (${new Date().toISOString().slice(0, 16)}, ${rounds} rounds, Node 22)`,
      "",
      "CPU time of one run in a fresh process, modules loaded first, implementations alternating. Ratios: pi / bonsai, above 1 means bonsai is faster; median over rounds (lowest–highest round).",
      `The export pages: bonsai ${(exported.bonsaiBytes / 1e6).toFixed(1)} MB (bounded to 20 MiB, with what each compaction dropped), pi ${(exported.piBytes / 1e6).toFixed(1)} MB (every entry, unbounded).`,
      "",
      ...lines,
      "",
    ].join("\n");
    publish("commands", md, { rounds, results }, argv);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main();
