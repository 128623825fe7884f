/** The pi package, built from the current sources before a test loads it the way pi does. */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const PI_BONSAI_DIR = fileURLToPath(new URL("../../packages/pi-bonsai", import.meta.url));

// `npm test` builds it once before any test file starts (scripts/test.ts) and says so here, so
// that concurrent test files do not each build it; a file run on its own builds it itself.
let built = process.env.BONSAI_TEST_PI_BONSAI_BUILT === "1";

export function buildPiBonsai(): void {
  if (built) return;
  execFileSync(process.execPath, [join(PI_BONSAI_DIR, "build.mjs")], { stdio: ["ignore", "ignore", "inherit"] });
  built = true;
}
