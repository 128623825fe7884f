/**
 * `bonsai view`'s server: the session page on 127.0.0.1, its model without bodies, bodies and
 * search on request, and a server-sent event whenever the session changes. Read-only
 * (docs/ARCHITECTURE.md, "See a session"): the session is opened without the writer lock and
 * opened again after each change, which a file watcher reports for a session file and polling
 * for a database. It never writes to the store.
 */
import { watch, type FSWatcher, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, dirname, resolve } from "node:path";
import { openForReading, type WarningListener } from "../ops/open-session.js";
import type { SessionManager } from "../session/manager.js";
import { parseLocation } from "../storage/location.js";
import { type ArchivedOriginals, blocksText, entryBlocks } from "./blocks.js";
import { pageHtml } from "./html.js";
import type { ViewModel } from "./model.js";
import { pageAsset } from "./page-asset.js";
import { archivedOriginals } from "../storage/archive.js";
import { identityAt } from "../storage/open-index-file.js";
import { openViewCaches, type ReadViewOptions, viewModelOf } from "./source.js";
import type { EntryDigest } from "./entry-digest.js";
import type { CompactionDrops } from "../ops/dropped.js";

export interface ViewServerOptions extends Pick<ReadViewOptions, "contextWindow" | "reserveTokens"> {
  /** 0: any free port */
  port?: number;
  /** how often a database session is checked for changes, and a file besides its watcher (ms) */
  pollMs?: number;
  onWarning?: WarningListener;
}

export interface ViewServer {
  url: string;
  /** the model's version: bumped on each change sent */
  readonly version: number;
  /** checks the store now (tests; the watcher and polling call it too) */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

/** Most bodies one request may ask for. */
const MAX_IDS = 500;

interface Snapshot {
  session: SessionManager;
  model: ViewModel;
  archived: ArchivedOriginals;
  signature: string;
  /**
   * what says the session was rewritten, by bonsai (pruned results, archived originals) or another
   * program (another file in its place): another one starts the drops and digests afresh
   */
  rewrites: string;
  /** the file's size when read: a file that shrank was rewritten in place */
  bytes: number;
  /** what each compaction dropped, found once while only appends come (ViewInput.drops) */
  drops: Map<string, CompactionDrops>;
  /** the digests of the messages, kept the same way (ViewInput.digests) */
  digests: Map<string, EntryDigest>;
}

/** The file at `location` as it is (device, inode, size), or nothing for a database session or a file that cannot be seen. */
function fileMark(location: string): { file: string; bytes: number } {
  const parsed = parseLocation(location);
  const now = parsed.kind === "file" ? identityAt(parsed.path) : undefined;
  return now ? { file: `${now.dev}:${now.ino}`, bytes: now.size } : { file: "", bytes: 0 };
}

/**
 * What changes when the session does. A rewrite of a file (bonsai's pruning renames a new file
 * over it) shows as another file in its place, so no body is read; a database's shows as the
 * count of its pruned results, which reads every body.
 */
function signatureOf(session: SessionManager, archived: ArchivedOriginals, file: string | undefined): { signature: string; rewrites: string } {
  const pruned = () => session.getEntries().reduce((n, e) => n + (e.type === "message" && e.message.role === "toolResult" && e.message.prunedAt !== undefined ? 1 : 0), 0);
  const rewrites = `${file ?? pruned()}:${archived.size}`;
  const last = session.getLastEntry();
  return { signature: `${session.getEntryCount()}:${last?.id ?? ""}:${session.getLeafId() ?? ""}:${rewrites}:${session.getSessionName() ?? ""}`, rewrites };
}

/** No other site may frame the page (the page's own policy is a meta tag, which cannot say so). */
const NO_FRAMING = { "x-frame-options": "DENY", "content-security-policy": "frame-ancestors 'none'" };

function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, { "content-type": type, "cache-control": "no-store", "x-content-type-options": "nosniff", ...NO_FRAMING });
  response.end(body);
}

const json = (response: ServerResponse, value: unknown) => send(response, 200, "application/json; charset=utf-8", JSON.stringify(value));

export async function startViewServer(location: string, options: ViewServerOptions = {}): Promise<ViewServer> {
  /** The session as stored now, or undefined when it has not changed since `previous`. */
  const read = async (previous?: Snapshot): Promise<Snapshot | undefined> => {
    // the first read takes what an earlier view or export found each compaction dropped, and the
    // digests of the messages; later ones keep their own
    const caches = previous ? undefined : openViewCaches(location, { drops: true, digests: true });
    // seen before the session is read: a file put in its place meanwhile shows as a rewrite next time
    const mark = fileMark(location);
    const session = await openForReading(location, options.onWarning);
    try {
      const archived = await archivedOriginals(location, options.onWarning);
      const { signature, rewrites } = signatureOf(session, archived, mark.file ? `${mark.file}:${previous && mark.bytes < previous.bytes ? "shrank" : ""}` : undefined);
      if (signature === previous?.signature) {
        await session.close();
        return undefined;
      }
      // the context window is looked up once; later models keep it
      const contextWindow = options.contextWindow ?? previous?.model.threshold?.contextWindow;
      const kept = caches?.(session.getSessionFile());
      const unchanged = previous && previous.rewrites === rewrites;
      const drops = unchanged ? previous.drops : (kept?.drops ?? new Map<string, CompactionDrops>());
      const digests = unchanged ? previous.digests : (kept?.digests ?? new Map<string, EntryDigest>());
      const model = await viewModelOf(session, location, { contextWindow, reserveTokens: options.reserveTokens, drops, digests });
      kept?.save();
      return { session, model, archived, signature, rewrites, bytes: mark.bytes, drops, digests };
    } catch (error) {
      await session.close();
      throw error;
    }
  };
  let current = (await read())!;
  let version = 0;
  const asset = await pageAsset();
  const html = pageHtml(asset, "live", null, `${current.model.session.name ?? current.model.session.id} · bonsai view`);
  const listeners = new Set<ServerResponse>();
  let refreshing: Promise<void> | undefined;
  let closed = false;

  const refresh = (): Promise<void> => {
    refreshing ??= (async () => {
      try {
        const next = await read(current);
        if (!next || closed) {
          if (next) await next.session.close();
          return;
        }
        const previous = current;
        version++;
        next.model.version = version;
        current = next;
        await previous.session.close();
        for (const listener of listeners) listener.write(`event: change\ndata: ${JSON.stringify({ version })}\n\n`);
      } catch (error) {
        // a half-written line or a rewrite in progress: the next change or poll reads it again
        options.onWarning?.(`${location}: could not read the session again (${error instanceof Error ? error.message : String(error)})`);
      } finally {
        refreshing = undefined;
      }
    })();
    return refreshing;
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    // DNS rebinding: only requests addressed to this machine by its loopback names
    const host = (request.headers.host ?? "").replace(/:\d+$/, "");
    if (host !== "127.0.0.1" && host !== "localhost") return send(response, 403, "text/plain", "bonsai view answers only requests for 127.0.0.1\n");
    if (request.method !== "GET" && request.method !== "HEAD") return send(response, 405, "text/plain", "bonsai view is read-only\n");
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    switch (url.pathname) {
      case "/":
        return send(response, 200, "text/html; charset=utf-8", html);
      case "/api/model":
        return json(response, current.model);
      case "/api/bodies": {
        // one `ids` parameter per entry: an id may hold a comma
        const ids = url.searchParams.getAll("ids").filter(Boolean).slice(0, MAX_IDS);
        const { session, archived } = current;
        const bodies: Record<string, unknown> = {};
        for (const id of ids) {
          const entry = session.getEntry(id);
          if (entry) bodies[id] = entryBlocks(entry, archived);
        }
        return json(response, { bodies });
      }
      case "/api/search": {
        const query = (url.searchParams.get("q") ?? "").toLowerCase();
        const { session, archived, model } = current;
        const ids: string[] = [];
        if (query) {
          // every body is searched: read in one pass (and kept for the next search), not one read per entry
          session.getEntries();
          for (const node of model.nodes) {
            const entry = session.getEntry(node.id);
            const text = `${node.kind}\n${node.label ?? ""}\n${node.preview}\n${entry ? blocksText(entryBlocks(entry, archived)) : ""}`;
            if (text.toLowerCase().includes(query)) ids.push(node.id);
          }
        }
        return json(response, { ids });
      }
      case "/api/events":
        response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" });
        response.write(`retry: 1000\nevent: hello\ndata: ${JSON.stringify({ version })}\n\n`);
        listeners.add(response);
        request.on("close", () => listeners.delete(response));
        return;
      default:
        return send(response, 404, "text/plain", "not found\n");
    }
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error) => {
      if (!response.headersSent) send(response, 500, "text/plain", `${error instanceof Error ? error.message : String(error)}\n`);
      else response.end();
    });
  });
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(options.port ?? 0, "127.0.0.1", () => done());
  });

  // changes: a watcher on the file's folder (a rewrite renames a new file over the old one) and a
  // poll beside it, which is all a database gets
  const where = parseLocation(location);
  const watchers: FSWatcher[] = [];
  let debounce: NodeJS.Timeout | undefined;
  const soon = () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => void refresh(), 100);
  };
  let stamp = "";
  const fileStamp = (file: string) => {
    try {
      const s = statSync(file);
      return `${s.size}:${s.mtimeMs}:${s.ino}`;
    } catch {
      return "";
    }
  };
  if (where.kind === "file") {
    const file = resolve(where.path);
    stamp = fileStamp(file);
    try {
      const names = new Set([basename(file), `${basename(file)}.pruned.jsonl`]);
      watchers.push(watch(dirname(file), (_event, name) => (name === null || names.has(String(name)) ? soon() : undefined)));
    } catch {
      // no watcher (some file systems): polling below still sees changes
    }
  }
  const poll = setInterval(() => {
    if (where.kind === "file") {
      const next = fileStamp(resolve(where.path));
      if (next === stamp) return;
      stamp = next;
    }
    void refresh();
  }, options.pollMs ?? (where.kind === "file" ? 1000 : 2000));
  const heartbeat = setInterval(() => {
    for (const listener of listeners) listener.write(": still here\n\n");
  }, 15_000);
  poll.unref();
  heartbeat.unref();

  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    get version() {
      return version;
    },
    refresh,
    close: async () => {
      closed = true;
      clearInterval(poll);
      clearInterval(heartbeat);
      clearTimeout(debounce);
      for (const w of watchers) w.close();
      for (const listener of listeners) listener.end();
      listeners.clear();
      const stopped = new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      await stopped;
      await refreshing;
      await current.session.close();
    },
  };
}
