/**
 * A child process that writes one session, driven by the multi-process tests:
 *   node --import tsx store-writer.ts LOCATION COUNT [hold|forever]
 * It prints "ready", waits for "go" on stdin, opens the session (printing "opened", or "locked
 * <message>" and exiting 3), appends COUNT entries one at a time (printing "appended N" every 50),
 * then, with "hold", waits for "close" on stdin; with "forever" it keeps appending until killed.
 * Line i is sessionLine(id, i), so the parent knows exactly what must be stored.
 */
import { basename } from "node:path";
import { createInterface } from "node:readline";
import { SessionLockedError } from "../../src/storage/lock.js";
import { parseLocation } from "../../src/storage/location.js";
import { openSessionAt } from "../../src/storage/open.js";
import { sessionLine } from "./store-contract.js";

const [location, countText, mode] = process.argv.slice(2);
const count = Number(countText);
const where = parseLocation(location);
// a file session is named after its file: `<id>.jsonl`
const id = where.kind === "file" ? basename(where.path, ".jsonl") : where.sessionId!;

const input = createInterface({ input: process.stdin });
const commands = input[Symbol.asyncIterator]();
async function waitFor(command: string): Promise<void> {
  for (;;) {
    const next = await commands.next();
    if (next.done) process.exit(4);
    if (next.value.trim() === command) return;
  }
}

console.log("ready");
await waitFor("go");
let opened: Awaited<ReturnType<typeof openSessionAt>>;
try {
  opened = await openSessionAt(location);
} catch (error) {
  if (error instanceof SessionLockedError) {
    console.log(`locked ${error.message}`);
    process.exit(3);
  }
  throw error;
}
console.log("opened");
const backend = opened.backend!;
const have = opened.loaded ? opened.loaded.fileEntries.length : 0;
const end = mode === "forever" ? Number.POSITIVE_INFINITY : have + count + (have === 0 ? 1 : 0);
let i = have;
for (; i < end; i++) {
  backend.append([sessionLine(id, i)]);
  if (i % 50 === 0) {
    // let queued (PostgreSQL) writes go out, and report progress
    await backend.flush();
    console.log(`appended ${i}`);
  }
}
await backend.flush();
console.log(`appended ${i - 1}`);
if (mode === "hold") await waitFor("close");
await backend.close();
console.log("closed");
input.close();
