/**
 * Session locations as the CLI and the library take them:
 *   - a file path (`session.jsonl`, `./dir/x.jsonl`, `file:///abs/x.jsonl`)
 *   - `sqlite:PATH#SESSION_ID` (also `sqlite://PATH#…`; `sqlite:///abs/path#…`)
 *   - `postgres://user@host:port/db?options#SESSION_ID` (or `postgresql://`); missing parts come
 *     from the usual PG* environment variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE),
 *     so `postgres://#ID` alone uses them all.
 * The store part alone (no `#…`) names the whole store: what `bonsai ls` lists and where a new
 * session is created. The last `#` separates the session id, which may be percent-encoded.
 */
import { fileURLToPath } from "node:url";
import { checkSessionId, type StoreKind } from "./types.js";

export type StoreLocation =
  | { kind: "file"; path: string }
  | { kind: "sqlite"; path: string; sessionId?: string }
  | { kind: "postgres"; connectionString: string; sessionId?: string };

/** A location that cannot be parsed; the message says what was wrong and the accepted forms. */
export class LocationError extends Error {
  constructor(
    readonly location: string,
    reason: string,
  ) {
    super(`${location}: ${reason}`);
    this.name = "LocationError";
  }
}

const FORMS = "use a file path, sqlite:PATH#SESSION_ID or postgres://[user@host:port/db]#SESSION_ID";

/** Splits off the session id after `#`. Errors name the location without its password. */
function splitFragment(text: string): { base: string; id?: string } {
  const hash = text.lastIndexOf("#");
  if (hash === -1) return { base: text };
  const base = text.slice(0, hash);
  let id: string;
  try {
    id = decodeURIComponent(text.slice(hash + 1));
  } catch {
    throw new LocationError(redactPassword(text), "the session id after # is not valid percent-encoding");
  }
  return { base, id: checkSessionId(id, redactPassword(base)) };
}

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

/** Parses a location; throws LocationError for malformed ones. */
export function parseLocation(text: string): StoreLocation {
  const trimmed = text.trim();
  if (trimmed === "") throw new LocationError(JSON.stringify(text), `empty location; ${FORMS}`);
  const scheme = SCHEME.exec(trimmed)?.[1]?.toLowerCase();
  // one letter before ":" is a Windows drive, not a scheme
  if (scheme === undefined || scheme.length === 1) return { kind: "file", path: trimmed };
  switch (scheme) {
    case "file": {
      try {
        return { kind: "file", path: fileURLToPath(trimmed) };
      } catch (error) {
        throw new LocationError(trimmed, `not a usable file URL (${(error as Error).message})`);
      }
    }
    case "sqlite":
    case "sqlite3": {
      const { base, id } = splitFragment(trimmed);
      let path = base.slice(scheme.length + 1);
      if (path.startsWith("//")) path = path.slice(2);
      if (path === "") throw new LocationError(trimmed, "no database path after sqlite:; write sqlite:PATH#SESSION_ID");
      return id === undefined ? { kind: "sqlite", path } : { kind: "sqlite", path, sessionId: id };
    }
    case "postgres":
    case "postgresql": {
      const { base, id } = splitFragment(trimmed);
      let connectionString = base;
      if (connectionString === `${scheme}:`) connectionString = `${scheme}://`;
      if (!connectionString.startsWith(`${scheme}://`)) {
        throw new LocationError(redactPassword(trimmed), `expected ${scheme}://[user@host:port/db]#SESSION_ID`);
      }
      try {
        // pg parses it again; this catches what it would choke on, with our own message
        if (connectionString.length > `${scheme}://`.length) new URL(connectionString);
      } catch {
        throw new LocationError(redactPassword(trimmed), "not a valid PostgreSQL URL");
      }
      return id === undefined ? { kind: "postgres", connectionString } : { kind: "postgres", connectionString, sessionId: id };
    }
    default:
      // "name:thing" without "//" may well be a file called that; "x://" is a store we do not know
      if (trimmed.slice(scheme.length + 1).startsWith("//")) {
        throw new LocationError(trimmed, `unknown store "${scheme}:"; ${FORMS}`);
      }
      return { kind: "file", path: trimmed };
  }
}

/** Leaves the password out of a PostgreSQL URL (PGPASSWORD or ~/.pgpass supply it again). */
export function redactPassword(connectionString: string): string {
  return connectionString.replace(/^([a-z0-9+.-]+:\/\/)([^@/?#]*)@/i, (_all, prefix: string, auth: string) => {
    const colon = auth.indexOf(":");
    return `${prefix}${colon === -1 ? auth : auth.slice(0, colon)}@`;
  });
}

const encodeId = (id: string) => encodeURIComponent(id);

/** The location as text that parseLocation reads back (database passwords left out). */
export function formatLocation(location: StoreLocation): string {
  switch (location.kind) {
    case "file":
      return location.path;
    case "sqlite":
      return `sqlite:${location.path}${location.sessionId === undefined ? "" : `#${encodeId(location.sessionId)}`}`;
    case "postgres":
      return `${redactPassword(location.connectionString)}${location.sessionId === undefined ? "" : `#${encodeId(location.sessionId)}`}`;
  }
}

/** The same store, naming one session in it. */
export function withSessionId(location: StoreLocation, sessionId: string): StoreLocation {
  if (location.kind === "file") throw new Error(`${location.path}: a file holds one session; it has no session ids`);
  return { ...location, sessionId };
}

export function storeKind(location: StoreLocation): StoreKind {
  return location.kind;
}

/** A database location must name a session for anything but listing. */
export function requireSessionId(location: StoreLocation): string {
  if (location.kind === "file") return location.path;
  if (location.sessionId === undefined) {
    throw new LocationError(
      formatLocation(location),
      `which session? add #SESSION_ID (bonsai ls ${formatLocation(location)} lists them)`,
    );
  }
  return location.sessionId;
}
