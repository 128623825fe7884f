// oh-my-pi keeps state under its agent folder and HOME: both point into a fresh folder, which the
// caller removes after; XDG folders are unset so nothing is read from or written to the user's.
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function isolatedOmpHome(): string {
  const home = mkdtempSync(join(tmpdir(), "bonsai-oracle-omp-"));
  process.env.PI_CODING_AGENT_DIR = join(home, "agent");
  process.env.HOME = home;
  for (const key of ["XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"]) delete process.env[key];
  mkdirSync(process.env.PI_CODING_AGENT_DIR, { recursive: true });
  return home;
}
