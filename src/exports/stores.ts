/**
 * `bonsai-sessions/stores`: sessions in JSONL files, SQLite or PostgreSQL behind one interface.
 * Locations are strings (`session.jsonl`, `sqlite:PATH#ID`, `postgres://…#ID`); pg and
 * libsql load on first use. SessionManager.openUrl and createIn take the same locations.
 */
export { parseLocation, formatLocation, LocationError, type StoreLocation } from "../storage/location.js";
export { openSessionAt, listSessionsAt, readLinesAt } from "../storage/open.js";
export { copySession, type CopiedArchive, type CopyOptions, type CopyResult } from "../storage/copy.js";
export { archiveLocation, readArchiveAt } from "../storage/archive.js";
export {
  StoreVersionError,
  type SessionBackend,
  type SessionSummary,
  type StoreKind,
  type OpenedSession,
  type OpenSessionOptions,
  type StoredLines,
  type PrunedArchive,
} from "../storage/types.js";
