import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { bundleCli } from "./test-cli-bundle.js";
import { bundleTests } from "./test-bundles.js";
const ROOT = resolve(import.meta.dirname, "..");
function collect(dir: string): string[] { const out: string[] = []; for (const e of readdirSync(dir, { withFileTypes: true })) { const p = join(dir, e.name); if (e.isDirectory()) { if (e.name !== "fixtures" && e.name !== "helpers") out.push(...collect(p)); } else if (e.name.endsWith(".test.ts") && !e.name.endsWith(".browser.test.ts")) out.push(p); } return out.sort(); }
const files = collect(join(ROOT, "test"));
const tests = await bundleTests(ROOT, files);
const cli = await bundleCli(ROOT);
const { startTestServer } = await import("../test/helpers/postgres.js");
const server = await startTestServer();
execFileSync(process.execPath, [join(ROOT, "packages/pi-bonsai/build.mjs")]);
const env = { ...process.env, BONSAI_TEST_PG_URL: server.url, BONSAI_TEST_CLI: cli.path, BONSAI_TEST_PI_BONSAI_BUILT: "1" };
for (const f of files) {
  const r = spawnSync("/usr/bin/time", ["-f", "%e %U %S", process.execPath, "--enable-source-maps", "--test", tests.bundleOf.get(f)!], { cwd: ROOT, env, encoding: "utf8" });
  const t = r.stderr.trim().split("\n").at(-1);
  console.log(`${t} ${r.status} ${relative(ROOT, f)}`);
}
await server.stop(); cli.remove(); tests.remove();
