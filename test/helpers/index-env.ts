/**
 * The open index's folder for tests that read or check what is kept there (storage/open-index-file.ts,
 * storage/derived-cache.ts): BONSAI_INDEX_DIR pointed at a folder of the test's and BONSAI_INDEX
 * left unset for the tests of the suite or file it is called in, both put back after.
 */
import { after, before } from "node:test";

export function useIndexDir(dir: string): void {
  const saved = { dir: process.env.BONSAI_INDEX_DIR, off: process.env.BONSAI_INDEX };
  before(() => {
    process.env.BONSAI_INDEX_DIR = dir;
    delete process.env.BONSAI_INDEX;
  });
  after(() => {
    for (const [key, value] of [["BONSAI_INDEX_DIR", saved.dir], ["BONSAI_INDEX", saved.off]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
}
