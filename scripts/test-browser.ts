/**
 * `npm run test:browser`: the browser tests (`test/**\/*.browser.test.ts`), which drive the
 * machine's Chromium through playwright-core. Left out of `npm test`, which must pass without a
 * browser; .ci/run installs Chromium and runs these after it.
 *
 *   npm run test:browser              every browser test file
 *   npm run test:browser -- page      only files whose path contains one of the words
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { findChromium } from "../test/helpers/browser.js";
import { useTestIndexDir } from "./test-index.js";

const ROOT = resolve(import.meta.dirname, "..");

function collect(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== "fixtures") files.push(...collect(path));
    else if (entry.name.endsWith(".browser.test.ts")) files.push(path);
  }
  return files.sort();
}

const filters = process.argv.slice(2);
const files = collect(join(ROOT, "test")).filter((f) => filters.length === 0 || filters.some((w) => relative(ROOT, f).includes(w)));
if (files.length === 0) {
  console.error(`test:browser: no browser test file matches ${filters.join(" ") || "test/**/*.browser.test.ts"}`);
  process.exit(1);
}
const chromium = findChromium();
if (!chromium) {
  console.error("test:browser: no Chromium found; install it (`apt-get install -y chromium`) or set BONSAI_CHROMIUM");
  process.exit(1);
}
console.log(`test:browser: ${files.length} file(s) with ${chromium}`);
const env = { ...process.env };
const removeIndexDir = useTestIndexDir(env);
const child = spawn(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=1", "--test-reporter=spec", ...files], { cwd: ROOT, stdio: "inherit", env });
child.on("exit", (code, signal) => {
  removeIndexDir();
  process.exit(code ?? (signal ? 1 : 0));
});
