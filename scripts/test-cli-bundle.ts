/**
 * The CLI bundled from the sources for one `npm test` run (test/helpers/bonsai-bin.ts says why).
 * It sits two folders below the repository, in node_modules/.bonsai-test/, as dist/cli/main.js does,
 * so that what the sources find relative to themselves resolves the same way: the package.json two
 * folders up, the packages in node_modules, the session page's bundle beside it. Each run has a
 * bundle of its own (two runs at once do not collide); the page's bundle is shared, written whole
 * and renamed into place.
 */
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { bundlePage } from "../src/view/page-build.js";

export async function bundleCli(root: string): Promise<{ path: string; remove: () => void }> {
  const dir = join(root, "node_modules", ".bonsai-test");
  mkdirSync(dir, { recursive: true });
  removeStale(dir);
  const tag = `${process.pid}-${Date.now()}`;
  const path = join(dir, `cli-${tag}.mjs`);
  const page = bundlePage().then((asset) => {
    const temp = join(dir, `page.bundle.${tag}.tmp`);
    writeFileSync(temp, `export const js = ${JSON.stringify(asset.js)};\nexport const css = ${JSON.stringify(asset.css)};\n`);
    renameSync(temp, join(dir, "page.bundle.js"));
  });
  await Promise.all([
    build({
      entryPoints: [join(root, "src/cli/main.ts")],
      outfile: path,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      packages: "external",
      logLevel: "warning",
    }),
    page,
  ]);
  return { path, remove: () => rmSync(path, { force: true }) };
}

/** Bundles of runs that ended without removing theirs (killed), a day or more old. */
function removeStale(dir: string): void {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    try {
      if (/^cli-.*\.mjs$|\.tmp$/.test(name) && statSync(file).mtimeMs < dayAgo) rmSync(file, { force: true });
    } catch {
      // removed by another run meanwhile
    }
  }
}
