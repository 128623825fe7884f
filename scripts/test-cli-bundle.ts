/**
 * The CLI bundled from the sources for one `npm test` run (test/helpers/bonsai-bin.ts says why):
 * node_modules/.bonsai-test/cli-<run>/main.mjs, with the modules the CLI imports lazily split
 * into chunks beside it, so that a command loads what it uses and no more, as dist/ does. Each
 * source module keeps its own `import.meta.url` (scripts/test-bundles.ts), so what it finds
 * relative to itself (package.json, the session page's sources) resolves as from the sources.
 * Each run has a folder of its own (two runs at once do not collide); folders of runs that were
 * killed are removed by a later run once they are a day old.
 *
 * The scripts that tests start as processes of their own (a second writer, a fake server, a copy
 * killed half way) are bundled beside it, at their path under the repository (`test/helpers/
 * store-writer.mjs`), sharing its chunks: test/helpers/bonsai-bin.ts starts them from there.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { IMPORT_META, ownImportMeta, removeStale } from "./test-bundles.js";

/** The scripts tests start with `node`, by their path in the repository. */
export const SPAWNED_SCRIPTS = [
  "test/helpers/store-writer.ts",
  "test/helpers/serve-fake.ts",
  "test/helpers/pg-exit-early.ts",
  "test/helpers/copy-killed.ts",
  "test/helpers/sqlite-first-open.ts",
  "examples/agent-auto-compaction.ts",
];

export async function bundleCli(root: string): Promise<{ path: string; remove: () => void }> {
  const parent = join(root, "node_modules", ".bonsai-test");
  mkdirSync(parent, { recursive: true });
  removeStale(parent, (name) => name.startsWith("cli-")); // timings.json stays
  const dir = join(parent, `cli-${process.pid}-${Date.now()}`);
  await build({
    entryPoints: { main: join(root, "src/cli/main.ts"), ...Object.fromEntries(SPAWNED_SCRIPTS.map((script) => [script.replace(/\.ts$/, ""), join(root, script)])) },
    outdir: dir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    define: IMPORT_META,
    plugins: [ownImportMeta],
    logLevel: "warning",
  });
  return { path: join(dir, "main.mjs"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
