/**
 * How tests start the `bonsai` command. `npm test` bundles the CLI from the sources once per run
 * (scripts/test-cli-bundle.ts) and names the bundle in BONSAI_TEST_CLI: starting it costs less than
 * half of what a start through tsx costs (which transforms every module on each of the suite's
 * several hundred starts). A test file run on its own (`node --import tsx --test FILE`) has no
 * bundle and starts the sources through tsx, as before.
 */
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

/** The CLI's entry in the sources. */
const CLI_SOURCE = join(ROOT, "src/cli/main.ts");

const bundle = process.env.BONSAI_TEST_CLI;

/**
 * The node arguments that run `bonsai`, to be followed by the command's own arguments; node
 * options (`--require`, `--import`) go before them.
 */
export const BONSAI_ARGS: readonly string[] =
  bundle && existsSync(bundle) ? [bundle] : ["--import", import.meta.resolve("tsx"), CLI_SOURCE];

/**
 * The node arguments that run the TypeScript script at `path` (absolute, or relative to the
 * repository): its bundle from the same run when `npm test` made one (scripts/test-cli-bundle.ts,
 * SPAWNED_SCRIPTS), else the source through tsx. The script's own arguments follow.
 */
export function scriptArgs(path: string): string[] {
  const source = isAbsolute(path) ? path : join(ROOT, path);
  const bundled = bundle && join(dirname(bundle), relative(ROOT, source).replace(/\.ts$/, ".mjs"));
  return bundled && existsSync(bundled) ? [bundled] : ["--import", import.meta.resolve("tsx"), source];
}
