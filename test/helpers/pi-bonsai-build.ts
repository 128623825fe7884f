/** The pi package, built from the current sources before a test loads it the way pi does. */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const PI_BONSAI_DIR = fileURLToPath(new URL("../../packages/pi-bonsai", import.meta.url));

let built = false;

export function buildPiBonsai(): void {
  if (built) return;
  execFileSync(process.execPath, [join(PI_BONSAI_DIR, "build.mjs")], { stdio: ["ignore", "ignore", "inherit"] });
  built = true;
}
