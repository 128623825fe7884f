/**
 * The open-index folder a test run's children use (storage/open-index-file.ts, and the derived
 * caches beside it): a temporary one unless BONSAI_INDEX_DIR names one, so no test writes into
 * the user's ~/.bonsai. Shared by `npm test`, `test:browser` and `test:oracle`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Sets BONSAI_INDEX_DIR in `env` when it is not set; the returned function removes the folder made. */
export function useTestIndexDir(env: NodeJS.ProcessEnv): () => void {
  if (env.BONSAI_INDEX_DIR) return () => undefined;
  const dir = mkdtempSync(join(tmpdir(), "bonsai-test-index-"));
  env.BONSAI_INDEX_DIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
