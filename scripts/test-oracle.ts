/**
 * `npm run test:oracle`: bonsai checked against the real agents (oracle/, README "Agents and
 * versions"). First the oracle suite (contexts and leaves, bonsai's rewrites reopened, serve
 * behind omp's transcript forms), then pi-bonsai's end-to-end tests again inside pi 1.6.0 on
 * Node 22 (`npm test` runs them inside pi 0.73.1). The agents come from `npm run oracle:install`.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { AGENTS, missing } from "../oracle/agents.js";
import { useTestIndexDir } from "./test-index.js";

const ROOT = join(import.meta.dirname, "..");
const problems = AGENTS.map(missing).filter(Boolean);
if (problems.length > 0) {
  console.error(`test:oracle: ${problems.join("; ")}`);
  process.exit(1);
}

const base = { ...process.env };
const removeIndexDir = useTestIndexDir(base);
const run = (command: string, args: string[], env: Record<string, string> = {}) =>
  spawnSync(command, args, { cwd: ROOT, stdio: "inherit", env: { ...base, ...env } }).status ?? 1;

const oracle = run(process.execPath, ["--import", "tsx", "--test", "oracle/oracle.test.ts", "oracle/rewrites.test.ts", "oracle/serve.test.ts"]);

const pi1 = AGENTS.find((a) => a.name.startsWith("pi 1."))!;
const piBonsaiTests = ["e2e", "package", "request-pruning", "status"].map((name) => `test/pi-bonsai/${name}.test.ts`);
if (!piBonsaiTests.every((file) => existsSync(join(ROOT, file)))) throw new Error("test:oracle: a pi-bonsai test file moved");
console.log(`\npi-bonsai's end-to-end tests inside ${pi1.name} (${pi1.command})`);
const piBonsai = run(pi1.command, ["--import", "tsx", "--test", ...piBonsaiTests], { BONSAI_TEST_PI_PACKAGE: pi1.packageDir });

removeIndexDir();
console.log(`\noracle suite: ${oracle === 0 ? "passed" : "FAILED"}; pi-bonsai inside ${pi1.name}: ${piBonsai === 0 ? "passed" : "FAILED"}`);
process.exit(oracle === 0 && piBonsai === 0 ? 0 : 1);
