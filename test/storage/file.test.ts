/** The file store, bonsai's default: the shared store contract, run against a directory of session files. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storeContract } from "../helpers/store-contract.js";

storeContract("file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "bonsai-"));
  // a file session is one file; the store is the directory that holds them
  return { store: dir, session: (id) => join(dir, `${id}.jsonl`), done: async () => rmSync(dir, { recursive: true, force: true }) };
});
