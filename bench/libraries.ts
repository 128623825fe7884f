/**
 * The two libraries under test behind one small interface, so every operation runs the same
 * code path for both. The reference is loaded from its own dist modules (session manager and
 * compaction), not through its package root: the root pulls in the whole agent and its TUI,
 * which would inflate its baseline memory with code a session store does not need.
 * Optional bonsai operations are looked up by name, so the bench picks them up as they land.
 */
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The fields every entry has in both libraries. */
export interface Entry {
  type: string;
  id: string;
  parentId: string | null;
  message?: { role?: string };
}

export interface Session {
  getEntries(): readonly Entry[];
  getEntry(id: string): Entry | undefined;
  getLeafId(): string | null;
  getBranch(fromId?: string): readonly Entry[];
  getTree(): unknown;
  buildSessionContext(): { messages: unknown[] };
  appendMessage(message: unknown): string;
  close?(): void;
}

export interface CompactionSettings {
  enabled: boolean;
  reserveTokens: number;
  keepRecentTokens: number;
}

export interface Library {
  name: "bonsai" | "bonsai-trusted" | "reference";
  /** read-only where the library has such a mode; the reference always opens read-write */
  open(path: string): Session;
  /** open for appending */
  openForWrite(path: string, options?: { fsyncEachAppend?: boolean }): Session;
  findCutPoint?(entries: readonly Entry[], start: number, end: number, keepRecentTokens: number): unknown;
  prepareCompaction?(entries: readonly Entry[], settings: CompactionSettings): unknown;
  /** which tool outputs pruning would replace (bonsai's planPruning) */
  planPruning?(entries: readonly Entry[]): unknown;
  collectEntriesForBranchSummary?(session: Session, oldLeafId: string | null, targetId: string): unknown;
  /** the loader's full parse of every line into entries, without the index (bonsai only) */
  parseAll?(path: string): unknown;
}

type Fn = (...args: never[]) => unknown;
const fn = (module: Record<string, unknown>, name: string): Fn | undefined =>
  typeof module[name] === "function" ? (module[name] as Fn) : undefined;

/** bonsai; `trusted` opens with bodies: "trusted" (message lines not parsed at open). */
export async function loadBonsai(trusted = false): Promise<Library> {
  const bonsai = (await import("../src/index.js")) as unknown as Record<string, unknown>;
  const { SessionManager } = await import("../src/session/manager.js");
  const { loadSessionFile } = await import("../src/storage/load.js");
  const cut = fn(bonsai, "findCutPoint");
  const prepare = fn(bonsai, "prepareCompaction");
  // the plan, not the in-place prune: repeated runs must see the same unpruned entries
  const prune = fn(bonsai, "planPruning");
  const collect = fn(bonsai, "collectEntriesForBranchSummary");
  return {
    name: trusted ? "bonsai-trusted" : "bonsai",
    open: (path) => SessionManager.open(path, { readOnly: true, bodies: trusted ? "trusted" : "checked" }) as unknown as Session,
    openForWrite: (path, options) => SessionManager.open(path, options) as unknown as Session,
    findCutPoint: cut && ((e, s, x, k) => (cut as (...a: unknown[]) => unknown)(e, s, x, k)),
    prepareCompaction: prepare && ((e, settings) => (prepare as (...a: unknown[]) => unknown)(e, settings)),
    planPruning: prune && ((e) => (prune as (...a: unknown[]) => unknown)(e)),
    collectEntriesForBranchSummary: collect && ((s, o, t) => (collect as (...a: unknown[]) => unknown)(s, o, t)),
    parseAll: (path) => loadSessionFile(path),
  };
}

export async function loadReference(): Promise<Library> {
  // the package exports only its root: find its dist folder through it
  const dist = dirname(fileURLToPath(import.meta.resolve("@mariozechner/pi-coding-agent")));
  const load = async (rel: string) => (await import(pathToFileURL(join(dist, rel)).href)) as Record<string, unknown>;
  const sessions = await load("core/session-manager.js");
  const compaction = await load("core/compaction/index.js");
  const SessionManager = sessions.SessionManager as { open(path: string): Session };
  const cut = fn(compaction, "findCutPoint") as Library["findCutPoint"];
  const prepare = fn(compaction, "prepareCompaction") as Library["prepareCompaction"];
  const collect = fn(compaction, "collectEntriesForBranchSummary") as Library["collectEntriesForBranchSummary"];
  return {
    name: "reference",
    open: (path) => SessionManager.open(path),
    openForWrite: (path) => SessionManager.open(path),
    findCutPoint: cut,
    prepareCompaction: prepare,
    collectEntriesForBranchSummary: collect,
  };
}
