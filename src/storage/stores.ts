/**
 * Every kind of store in one map, the only place that lists them: each is a Store (types.ts)
 * in its own file, and everything that opens, lists, reads or copies a session reaches its store
 * through here instead of testing the location's kind (docs/ARCHITECTURE.md, storage). A new
 * store is one file and one line below.
 */
import { FILE_STORE } from "./file.js";
import { POSTGRES_STORE } from "./postgres.js";
import { SQLITE_STORE } from "./sqlite.js";
import type { Store, StoreKind, StoreLocation } from "./types.js";

export const STORES: { readonly [K in StoreKind]: Store<K> } = {
  file: FILE_STORE,
  sqlite: SQLITE_STORE,
  postgres: POSTGRES_STORE,
};

/** Where a location that no store's scheme claims goes: a plain path names a file. */
export const DEFAULT_STORE: Store<"file"> = STORES.file;

/** The store a location is in. */
export function storeOf(location: StoreLocation): Store {
  return STORES[location.kind];
}

/** The store a URL scheme (lower case) names, if any. */
export function storeForScheme(scheme: string): Store | undefined {
  return Object.values(STORES).find((store) => store.schemes.includes(scheme));
}
