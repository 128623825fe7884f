/**
 * A `copy --force` killed half way, for the copy tests:
 *   node --import tsx copy-killed.ts FROM TO
 * copies the session file FROM over the session file TO and kills itself with SIGKILL right after
 * the first of TO's two files (the session, its archive of pruned tool output) is renamed into
 * place: what a kill between the two writes leaves behind.
 */
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { prunedArchivePath } from "../../src/ops/prune.js";
import { copySession } from "../../src/storage/copy.js";

const [from, to] = process.argv.slice(2);
const rename = fs.renameSync;
fs.renameSync = (source: fs.PathLike, target: fs.PathLike) => {
  rename(source, target);
  if (String(target) === to || String(target) === prunedArchivePath(to)) process.kill(process.pid, "SIGKILL");
};
syncBuiltinESMExports();
await copySession(from, to, { overwrite: true });
process.exit(0); // not killed: the copy never renamed a file of TO into place
