/**
 * Reading a session for the page: opened read-only (no writer lock, nothing written), with the
 * originals of its pruned tool results from the store's archive (storage/archive.ts) and the
 * context window of its model from pi-ai's registry when the caller does not name one.
 */
import { DEFAULT_COMPACTION_SETTINGS } from "../compaction/settings.js";
import { openForReading, type WarningListener } from "../ops/open-session.js";
import type { SessionManager } from "../session/manager.js";
import { DROPS_FORMAT, isCompactionDrops } from "../ops/dropped.js";
import { archivedOriginals } from "../storage/archive.js";
import { modelLookup } from "../summarizer/model-table.js";
import { derivedCache } from "../storage/derived-cache.js";
import { redactPassword } from "../storage/database.js";
import { packageVersion } from "../util/package-version.js";
import { buildViewModel, type ViewInput, type ViewModel } from "./model.js";

export interface ReadViewOptions {
  /** include every body (an export) */
  withBodies?: boolean;
  /** look for what each compaction dropped (default true; a Markdown export does not show it) */
  withDrops?: boolean;
  /** what each compaction dropped, kept across builds of the same session (ViewInput.drops) */
  drops?: ViewInput["drops"];
  /** the model's context window in tokens; looked up in pi-ai's registry when absent */
  contextWindow?: number;
  reserveTokens?: number;
  onWarning?: WarningListener;
}

/** The context window of `provider/modelId` in pi-ai's registry, or 0 when it is not known there. */
export async function knownContextWindow(model: { provider: string; modelId: string } | null): Promise<number> {
  if (!model) return 0;
  try {
    const lookup = await modelLookup();
    return lookup(model.provider, model.modelId)?.contextWindow ?? 0;
  } catch {
    return 0;
  }
}

/** The view model of an open session. */
export async function viewModelOf(session: SessionManager, location: string, options: ReadViewOptions = {}): Promise<ViewModel> {
  const leafId = session.getLeafId();
  const contextWindow = options.contextWindow ?? (await knownContextWindow(session.buildSessionContext(leafId).model));
  const archived = options.withBodies ? await archivedOriginals(location, options.onWarning) : new Map();
  return buildViewModel({
    header: session.getHeader(),
    name: session.getSessionName(),
    // the page is made to be mailed and served: a database password stays out of it
    location: redactPassword(location),
    entries: session.getEntries(),
    tree: session.getTree(),
    leafId,
    activePath: session.getBranch(leafId),
    archived,
    contextWindow,
    reserveTokens: options.reserveTokens ?? DEFAULT_COMPACTION_SETTINGS.reserveTokens,
    withBodies: options.withBodies,
    withDrops: options.withDrops,
    drops: options.drops,
  });
}

/**
 * What each compaction of the session file at `location` dropped, as far as an earlier export or
 * view worked it out (storage/derived-cache.ts): found once per compaction, not per export.
 */
export const dropsCache = (location: string) => derivedCache(location, "drops", `${DROPS_FORMAT}/${packageVersion()}`, isCompactionDrops);

/** Opens `location` read-only, builds its view model and closes it. */
export async function readViewModel(location: string, options: ReadViewOptions = {}): Promise<ViewModel> {
  // opened before the session is read, so a file rewritten meanwhile is not cached under the new bytes
  const cache = options.withDrops !== false && !options.drops ? dropsCache(location) : undefined;
  const session = await openForReading(location, options.onWarning);
  try {
    if (!cache?.describes(session.getSessionFile())) return await viewModelOf(session, location, options);
    const model = await viewModelOf(session, location, { ...options, drops: cache.values });
    cache.save();
    return model;
  } finally {
    await session.close();
  }
}
