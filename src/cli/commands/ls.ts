/** `bonsai ls STORE`: the sessions in a directory of files, a SQLite file or a PostgreSQL database. */
import type { Command } from "commander";
import { parseLocation, sessionIdOf, storeLocationOf } from "../../storage/location.js";
import { listSessionsAt } from "../../storage/open.js";
import type { SessionSummary } from "../../storage/types.js";
import { CliError, type Colors, formatBytes, formatCount, oneLine, warn } from "../output.js";
import { registerReportCommand } from "../report-command.js";
import { plural } from "../plural.js";

/** "2026-01-01 12:00" in UTC: sortable, and the same on every machine. */
const shortTime = (iso: string | null) => (iso ? iso.replace("T", " ").slice(0, 16) : "-");

export function formatSessions(store: string, sessions: readonly SessionSummary[], c: Colors): string {
  if (sessions.length === 0) return `no sessions in ${store}`;
  const rows = sessions.map((s) => ({
    updated: shortTime(s.updated),
    entries: formatCount(s.entryCount),
    size: formatBytes(s.bytes),
    title: s.title ? oneLine(s.title) : "",
    location: s.location,
  }));
  const width = (key: "updated" | "entries" | "size") => Math.max(...rows.map((r) => r[key].length));
  const [wu, we, ws] = [width("updated"), width("entries"), width("size")];
  const lines = rows.map(
    (r) =>
      `${c.dim(r.updated.padEnd(wu))}  ${r.entries.padStart(we)}  ${r.size.padStart(ws)}  ${r.title ? `${c.bold(r.title)}  ` : ""}${c.cyan(r.location)}`,
  );
  const total = sessions.reduce((n, s) => n + s.bytes, 0);
  lines.push(c.dim(`${plural(sessions.length, "session")}, ${formatBytes(total)} (last write UTC, entries, size, title, location)`));
  return lines.join("\n");
}

/** The sessions of a store; a database location with `#ID` lists that one session, as a file path lists its file. */
async function listed(store: string): Promise<SessionSummary[]> {
  const location = parseLocation(store);
  const id = sessionIdOf(location);
  if (id === undefined) return listSessionsAt(location, { onWarning: warn });
  const one = (await listSessionsAt(storeLocationOf(location), { onWarning: warn })).filter((s) => s.id === id);
  if (one.length === 0) throw new CliError(`${store}: no such session in the store`);
  return one;
}

export function register(program: Command): void {
  registerReportCommand(program, {
    name: "ls",
    description: "list the sessions in a store: a directory of session files, sqlite:PATH or postgres://…",
    argument: ["<store>", "a directory, sqlite:PATH, or postgres://user@host:port/db (PG* variables fill in the rest)"],
    json: "print stable JSON: [{id, location, title, cwd, created, updated, bytes, entryCount}], newest first",
    run: listed,
    format: (sessions, store, c) => formatSessions(store, sessions, c),
  });
}
