/**
 * Session locations as the CLI and the library take them:
 *   - a file path (`session.jsonl`, `./dir/x.jsonl`, `file:///abs/x.jsonl`)
 *   - `sqlite:PATH#SESSION_ID` (also `sqlite://PATH#…`; `sqlite:///abs/path#…`)
 *   - `postgres://user@host:port/db?options#SESSION_ID` (or `postgresql://`); missing parts come
 *     from the usual PG* environment variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE),
 *     so `postgres://#ID` alone uses them all.
 * The store part alone (no `#…`) names the whole store: what `bonsai ls` lists and where a new
 * session is created. The last `#` separates the session id, which may be percent-encoded.
 *
 * Each store reads and writes its own form (its Store in stores.ts); this module finds the store
 * a text names by its scheme, and gives every location operation one entry point.
 */
import { redactPassword } from "./database.js";
import { DEFAULT_STORE, STORES, storeForScheme, storeOf } from "./stores.js";
import { LocationError, type StoreKind, type StoreLocation } from "./types.js";

export { LocationError, redactPassword, type StoreLocation };

const forms = Object.values(STORES).map((store) => store.form);
const FORMS = `use ${forms.slice(0, -1).join(", ")} or ${forms[forms.length - 1]}`;

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

/** Parses a location; throws LocationError for malformed ones. */
export function parseLocation(text: string): StoreLocation {
  const trimmed = text.trim();
  if (trimmed === "") throw new LocationError(JSON.stringify(text), `empty location; ${FORMS}`);
  const scheme = SCHEME.exec(trimmed)?.[1]?.toLowerCase();
  // one letter before ":" is a Windows drive, not a scheme
  if (scheme === undefined || scheme.length === 1) return DEFAULT_STORE.parseLocation(trimmed, undefined);
  const store = storeForScheme(scheme);
  if (store) return store.parseLocation(trimmed, scheme);
  // "name:thing" without "//" may well be a file called that; "x://" is a store we do not know
  if (trimmed.slice(scheme.length + 1).startsWith("//")) {
    throw new LocationError(trimmed, `unknown store "${scheme}:"; ${FORMS}`);
  }
  return DEFAULT_STORE.parseLocation(trimmed, undefined);
}

/** The location as text that parseLocation reads back (database passwords left out). */
export function formatLocation(location: StoreLocation): string {
  return storeOf(location).formatLocation(location);
}

/** The same store, naming one session in it (a file holds one session: it throws). */
export function withSessionId(location: StoreLocation, sessionId: string): StoreLocation {
  return storeOf(location).withSessionId(location, sessionId);
}

export function storeKind(location: StoreLocation): StoreKind {
  return location.kind;
}

/** The session's key in its store: a file's path; a database location must name a session for anything but listing. */
export function requireSessionId(location: StoreLocation): string {
  return storeOf(location).sessionKey(location);
}

/** The session id a database location names (`#ID`); undefined for a file or a whole store. */
export function sessionIdOf(location: StoreLocation): string | undefined {
  return storeOf(location).sessionIdOf(location);
}

/** The whole store a location's session lives in (a database location without its `#ID`). */
export function storeLocationOf(location: StoreLocation): StoreLocation {
  return { ...location, sessionId: undefined } as StoreLocation;
}
