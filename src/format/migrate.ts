/**
 * Format migration v1 -> v2 -> v3, in place. v1 files are flat lists without ids; v2 renamed
 * nothing yet; v3 renamed the `hookMessage` role to `custom`. Unlike the reference, the new ids are
 * derived from the session's header and each entry's position (the same on every read, so ids printed by
 * one command work in the next; ARCHITECTURE.md, storage decisions), collision-checked against
 * each other, and v1 `model_change` entries gain the oh-my-pi spelling.
 */
import { derivedEntryId } from "./ids.js";
import { CURRENT_SESSION_VERSION, type FileEntry, type SessionHeader } from "./entry-types.js";

type Mutable = Record<string, unknown>;

export function sessionVersion(fileEntries: readonly FileEntry[]): number {
  const header = fileEntries.find((e) => e.type === "session") as SessionHeader | undefined;
  return typeof header?.version === "number" ? header.version : 1;
}

/** Returns true when anything changed. Idempotent. */
export function migrateSessionEntries(fileEntries: FileEntry[]): boolean {
  const version = sessionVersion(fileEntries);
  if (version >= CURRENT_SESSION_VERSION) return false;
  if (version < 2) migrateV1ToV2(fileEntries as unknown as Mutable[]);
  if (version < 3) migrateV2ToV3(fileEntries as unknown as Mutable[]);
  return true;
}

function migrateV1ToV2(entries: Mutable[]): void {
  const taken = new Set<string>();
  let previousId: string | null = null;
  const header = JSON.stringify(entries.find((e) => e.type === "session") ?? null);
  for (const [position, entry] of entries.entries()) {
    if (entry.type === "session") {
      entry.version = 2;
      continue;
    }
    const id = derivedEntryId(header, position, taken);
    taken.add(id);
    entry.id = id;
    entry.parentId = previousId;
    previousId = id;
    if (entry.type === "model_change") addModelSpellings(entry);
  }
  // A second pass: a compaction may point forward of itself only in broken files, but resolving
  // after all ids exist keeps the index lookup valid in every case. The index counts the header as 0.
  for (const entry of entries) {
    if (entry.type !== "compaction" || typeof entry.firstKeptEntryIndex !== "number") continue;
    const target = entries[entry.firstKeptEntryIndex];
    if (target && target.type !== "session" && typeof target.id === "string") entry.firstKeptEntryId = target.id;
    delete entry.firstKeptEntryIndex;
  }
}

function migrateV2ToV3(entries: Mutable[]): void {
  for (const entry of entries) {
    if (entry.type === "session") {
      entry.version = 3;
      continue;
    }
    const message = entry.message as Mutable | undefined;
    if (entry.type === "message" && message?.role === "hookMessage") message.role = "custom";
  }
}

/** Gives a model_change both spellings, so pi and oh-my-pi read the same model from it. */
export function addModelSpellings(entry: Mutable): void {
  if (typeof entry.provider === "string" && typeof entry.modelId === "string") {
    if (typeof entry.model !== "string") entry.model = `${entry.provider}/${entry.modelId}`;
    return;
  }
  if (typeof entry.model === "string") {
    const slash = entry.model.indexOf("/");
    if (slash > 0) {
      entry.provider = entry.model.slice(0, slash);
      entry.modelId = entry.model.slice(slash + 1);
    }
  }
}
