/**
 * One of several processes opening the same new SQLite stores at the same moment:
 *   node --import tsx sqlite-first-open.ts DIR NAME COUNT PEERS
 * For each of COUNT databases DIR/db-I.sqlite it waits, on marker files in DIR, until all PEERS
 * processes are ready, then opens (and so creates) the store and closes it. It prints one line per
 * open that failed, then `done FAILED`: a store being created by one process must never look
 * like another application's database to another.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openSqliteDatabase } from "../../src/storage/sqlite-schema.js";

const [dir, name, count, peers] = process.argv.slice(2);
const pause = new Int32Array(new SharedArrayBuffer(4));
let failed = 0;
for (let i = 0; i < Number(count); i++) {
  writeFileSync(join(dir, `ready-${i}-${name}`), "");
  // a peer that died never gets ready: give up rather than wait for it forever
  const deadline = Date.now() + 20_000;
  while (readdirSync(dir).filter((file) => file.startsWith(`ready-${i}-`)).length < Number(peers)) {
    if (Date.now() > deadline) {
      console.log(`db-${i}: a peer never got ready`);
      process.exit(1);
    }
    Atomics.wait(pause, 0, 0, 1);
  }
  try {
    openSqliteDatabase(join(dir, `db-${i}.sqlite`)).close();
  } catch (error) {
    failed++;
    console.log(`db-${i}: ${(error as Error).message}`);
  }
}
console.log(`done ${failed}`);
