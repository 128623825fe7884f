/**
 * Tools that let the agent look back past a compaction: `history_search` finds entries anywhere in
 * the session (every branch, compacted spans, pruned tool output read from its archive) and
 * `history_read` returns their original text. Read-only, bounded, secrets redacted. The search and
 * the reading are pure over entries; the tools read the session and its archive when called.
 */
import type { AgentTool, AgentToolResult } from "@mariozechner/pi-agent-core";
import type { TSchema } from "@mariozechner/pi-ai";
import { entryText } from "../format/entry-messages.js";
import type { SessionEntry } from "../format/entry-types.js";
import { archivedOriginals } from "../storage/archive.js";
import { originalsPrunedInMemory } from "../ops/prune.js";
import { redact } from "../summarizer/redact.js";

type Archived = ReadonlyMap<string, readonly { type: string; text?: string }[]>;

/** The line each compaction summary ends with while the agent has the tools: so it knows it can look back. */
export const RECALL_NOTE = "_(Everything before this summary can still be searched with history_search and read word for word with history_read.)_";

export const SEARCH_DEFAULT_LIMIT = 10;
export const SEARCH_MAX_LIMIT = 30;
/** Characters a history_read answer holds at most; what does not fit is said, not sent. */
export const READ_MAX_CHARS = 12_000;

export interface HistoryHit {
  id: string;
  kind: string;
  timestamp: string;
  preview: string;
}

const kindOf = (entry: SessionEntry) => (entry.type === "message" ? entry.message.role : entry.type);

/** A line of text around the first place `term` appears, whitespace collapsed. */
function around(text: string, term: string, width = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const at = Math.max(0, flat.toLowerCase().indexOf(term));
  const start = Math.max(0, at - width / 2);
  return `${start > 0 ? "…" : ""}${flat.slice(start, start + width)}${start + width < flat.length ? "…" : ""}`;
}

/** Entries whose text holds every word of `query` (case-insensitive), oldest first, at most `limit`. */
export function searchHistory(entries: readonly SessionEntry[], query: string, limit = SEARCH_DEFAULT_LIMIT, archived?: Archived): { hits: HistoryHit[]; total: number } {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (terms.length === 0) return { hits: [], total: 0 };
  const hits: HistoryHit[] = [];
  let total = 0;
  for (const entry of entries) {
    const text = entryText(entry, archived);
    const lower = text.toLowerCase();
    if (!text || !terms.every((t) => lower.includes(t))) continue;
    total++;
    if (hits.length < limit) hits.push({ id: entry.id, kind: kindOf(entry), timestamp: entry.timestamp, preview: around(text, terms[0]) });
  }
  return { hits, total };
}

/** The entries `ids` name, in the order asked, each as a heading and its text, within READ_MAX_CHARS. */
export function readHistory(entries: readonly SessionEntry[], ids: readonly string[], archived?: Archived): string {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const out: string[] = [];
  let used = 0;
  for (const [i, id] of ids.entries()) {
    const entry = byId.get(id) ?? entries.find((e) => e.id.startsWith(id));
    if (!entry) {
      out.push(`### ${id}\n(no such entry)`);
      continue;
    }
    const text = entryText(entry, archived) || `(a ${entry.type} entry, with no text)`;
    const block = `### ${entry.id} (${kindOf(entry)}, ${entry.timestamp})\n${text}`;
    if (used + block.length > READ_MAX_CHARS) {
      const room = READ_MAX_CHARS - used;
      if (room > 200) out.push(`${block.slice(0, room)}\n… (${block.length - room} more characters of ${entry.id}: read it alone)`);
      out.push(`(${ids.length - i - (room > 200 ? 1 : 0)} more entries not read: ask for fewer at a time)`);
      break;
    }
    out.push(block);
    used += block.length;
  }
  return out.join("\n\n");
}

/**
 * What the tools read a session through: bonsai's SessionManager is one, and pi-bonsai builds one
 * over pi's session manager (its file is `getSessionFile()` there).
 */
export interface RecallSource {
  getEntries(): readonly SessionEntry[];
  /** the path from the root to `leafId` */
  getBranch(leafId: string): readonly SessionEntry[];
  /** the session file (or store location), for its archive of pruned output */
  getLocation(): string | undefined;
}

/** The ids of the entries from `from` to `to` (inclusive) on the path that ends at `to`. */
export function rangeIds(session: RecallSource, from: string, to: string): string[] {
  const path = session.getBranch(to);
  const start = path.findIndex((e) => e.id === from || e.id.startsWith(from));
  if (start < 0) throw new Error(`${from} is not an ancestor of ${to}`);
  return path.slice(start).map((e) => e.id);
}

const result = (text: string): AgentToolResult<unknown> => ({ content: [{ type: "text", text: redact(text) }], details: {} });
const schema = (properties: Record<string, object>, required: string[]) =>
  ({ type: "object", properties, required, additionalProperties: false }) as unknown as TSchema;

/** history_search and history_read over `session` (and its archive of pruned output, when it has a location). */
export function recallTools(session: RecallSource): AgentTool[] {
  const archived = async (): Promise<Archived> => {
    const location = session.getLocation();
    // a turn's pruning keeps the originals in the file, and in memory for this process
    return new Map([...(location ? await archivedOriginals(location) : []), ...originalsPrunedInMemory(session)]);
  };
  return [
    {
      name: "history_search",
      label: "history_search",
      description:
        "Search the whole session history, including what earlier compactions summarized away and tool output that was pruned: entries whose text holds every word of the query, oldest first, with their ids. Read them with history_read.",
      parameters: schema(
        {
          query: { type: "string", description: "words that must all appear (case-insensitive)" },
          limit: { type: "integer", description: `at most this many hits (default ${SEARCH_DEFAULT_LIMIT}, at most ${SEARCH_MAX_LIMIT})` },
        },
        ["query"],
      ),
      execute: async (_id, params) => {
        const { query, limit } = params as { query: string; limit?: number };
        const n = Math.min(Math.max(1, Math.floor(limit ?? SEARCH_DEFAULT_LIMIT)), SEARCH_MAX_LIMIT);
        const { hits, total } = searchHistory(session.getEntries(), String(query), n, await archived());
        if (hits.length === 0) return result(`No entry holds all of: ${query}`);
        const lines = hits.map((h) => `${h.id} ${h.kind} ${h.timestamp}: ${h.preview}`);
        if (total > hits.length) lines.push(`(${total - hits.length} more; narrow the query)`);
        return result(lines.join("\n"));
      },
    },
    {
      name: "history_read",
      label: "history_read",
      description:
        "Read entries of the session word for word by id (as history_search gives them), or every entry from one id to a later one on the same branch. Pruned tool output comes back whole.",
      parameters: schema(
        {
          ids: { type: "array", items: { type: "string" }, description: "entry ids (unique prefixes accepted)" },
          from: { type: "string", description: "with `to`: the first entry of a range" },
          to: { type: "string", description: "with `from`: the last entry of a range" },
        },
        [],
      ),
      execute: async (_id, params) => {
        const { ids, from, to } = params as { ids?: string[]; from?: string; to?: string };
        const wanted = from !== undefined && to !== undefined ? rangeIds(session, from, to) : (ids ?? []);
        if (wanted.length === 0) return result("Name entries: ids, or from and to.");
        return result(readHistory(session.getEntries(), wanted, await archived()));
      },
    },
  ];
}
