/**
 * Reading a session for the page: opened read-only (no writer lock, nothing written), with the
 * originals of its pruned tool results from the store's archive (storage/archive.ts) and the
 * context window of its model from pi-ai's registry when the caller does not name one.
 */
import { DEFAULT_COMPACTION_SETTINGS } from "../compaction/settings.js";
import { openForReading, type WarningListener } from "../ops/open-session.js";
import type { SessionManager } from "../session/manager.js";
import { type CompactionDrops, DROPS_FORMAT, droppedAt, isCompactionDrops } from "../ops/dropped.js";
import { archivedOriginals } from "../storage/archive.js";
import { modelLookup } from "../summarizer/model-table.js";
import { derivedCache } from "../storage/derived-cache.js";
import { redactPassword } from "../storage/database.js";
import { packageVersion } from "../util/package-version.js";
import { flattenTree } from "../session/forest.js";
import { buildViewModel, type ViewInput, type ViewModel } from "./model.js";
import { DIGEST_FORMAT, digestOf, type EntryDigest, isDigested } from "./entry-digest.js";
import { digestColumns } from "./digest-columns.js";

export interface ReadViewOptions {
  /** include every body (an export) */
  withBodies?: boolean;
  /** look for what each compaction dropped (default true; a Markdown export does not show it) */
  withDrops?: boolean;
  /** what each compaction dropped, kept across builds of the same session (ViewInput.drops) */
  drops?: ViewInput["drops"];
  /** the digests of message entries, kept across builds of the same session (ViewInput.digests) */
  digests?: ViewInput["digests"];
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
  const contextWindow = options.contextWindow ?? (await knownContextWindow(session.getContextModel(leafId)));
  const archived = options.withBodies ? await archivedOriginals(location, options.onWarning) : new Map();
  const drops = options.drops ?? new Map<string, CompactionDrops>();
  const digests = options.digests ?? new Map<string, EntryDigest>();
  const withDrops = options.withDrops ?? true;
  const read = options.withBodies ? readWhole(session, leafId) : readOutline(session, leafId, digests, withDrops ? drops : undefined);
  return buildViewModel({
    header: session.getHeader(),
    name: session.getSessionName(),
    // the page is made to be mailed and served: a database password stays out of it
    location: redactPassword(location),
    ...read,
    leafId,
    archived,
    contextWindow,
    reserveTokens: options.reserveTokens ?? DEFAULT_COMPACTION_SETTINGS.reserveTokens,
    withBodies: options.withBodies,
    withDrops,
    drops,
    digests,
  });
}

type ReadEntries = Pick<ViewInput, "entries" | "tree" | "activePath">;

/** Every entry with its body: what a page with bodies is made from. */
const readWhole = (session: SessionManager, leafId: string | null): ReadEntries => ({ entries: session.getEntries(), tree: session.getTree(), activePath: session.getBranch(leafId) });

/**
 * The entries of a page without bodies, reading as few bodies as it can: what each compaction
 * dropped, when `drops` does not know it yet, from the compaction's whole path; then the digest
 * of every message that has none (entry-digest.ts), its body read in a pass that does not keep it.
 * The other messages are stand-ins that the model reads through their digests.
 */
function readOutline(session: SessionManager, leafId: string | null, digests: Map<string, EntryDigest>, drops?: Map<string, CompactionDrops>): ReadEntries {
  const read = (known: (id: string) => string | undefined) =>
    session.getOutline((entry) => {
      if (isDigested(entry) && !digests.has(entry.id)) digests.set(entry.id, digestOf(entry));
    }, known);
  // compactions, like every entry but messages and custom messages, were read at open
  for (const entry of drops ? session.getEntriesOfType("compaction") : []) {
    if (!drops || drops.has(entry.id)) continue;
    const path = session.getBranch(entry.id);
    drops.set(entry.id, droppedAt(path, path.length - 1));
  }
  const tree = read((id) => digests.get(id)?.timestamp);
  const entries = flattenTree(tree).map(({ node }) => node.entry);
  const byId = new Map(entries.map((e) => [e.id, e]));
  return { entries, tree, activePath: session.getBranchIds(leafId).flatMap((id) => byId.get(id) ?? []) };
}

/**
 * What each compaction of the session file at `location` dropped, as far as an earlier export or
 * view worked it out (storage/derived-cache.ts): found once per compaction, not per export.
 */
export const dropsCache = (location: string) => derivedCache(location, "drops", `${DROPS_FORMAT}/${packageVersion()}`, isCompactionDrops);

/** The digests of the message entries of the session file at `location`, kept like dropsCache. */
export const digestsCache = (location: string) => derivedCache(location, "digests", `${DIGEST_FORMAT}/${packageVersion()}`, digestColumns);

/** What the caches of a view hold for the session that was read, and how to keep what was added to them. */
export interface KeptValues {
  drops?: Map<string, CompactionDrops>;
  digests?: Map<string, EntryDigest>;
  save(): void;
}

/**
 * The caches a view of `location` reads and fills (what each compaction dropped, the digests),
 * opened now, before the session is read, so values worked out from a file rewritten meanwhile are
 * never kept under its new bytes; then asked for the file the session came from, they give the
 * values that are still valid for it.
 */
export function openViewCaches(location: string, want: { drops: boolean; digests: boolean }): (file: string | undefined) => KeptValues {
  const drops = want.drops ? dropsCache(location) : undefined;
  const digests = want.digests ? digestsCache(location) : undefined;
  return (file) => {
    const keptDrops = drops?.describes(file) ? drops : undefined;
    const keptDigests = digests?.describes(file) ? digests : undefined;
    return {
      drops: keptDrops?.values,
      digests: keptDigests?.values,
      save() {
        keptDrops?.save();
        keptDigests?.save();
      },
    };
  };
}

/** What withViewModel hands its caller: the model, the session it was read from (still open) and its messages' digests. */
export interface OpenViewModel {
  model: ViewModel;
  session: SessionManager;
  digests: Map<string, EntryDigest>;
}

/**
 * Opens `location` read-only, builds its view model, hands it to `use` while the session is still
 * open (its bodies can be read then), and closes it. What each compaction dropped and the digests
 * of its messages come from the caches an earlier read left, and what is worked out goes back.
 */
export async function withViewModel<T>(location: string, options: ReadViewOptions, use: (read: OpenViewModel) => T | Promise<T>): Promise<T> {
  const caches = openViewCaches(location, { drops: options.withDrops !== false && !options.drops, digests: !options.digests });
  const session = await openForReading(location, options.onWarning);
  try {
    const kept = caches(session.getSessionFile());
    const digests = options.digests ?? kept.digests ?? new Map<string, EntryDigest>();
    const model = await viewModelOf(session, location, { ...options, digests, ...(kept.drops ? { drops: kept.drops } : {}) });
    kept.save();
    return await use({ model, session, digests });
  } finally {
    await session.close();
  }
}

/** Opens `location` read-only, builds its view model and closes it. */
export const readViewModel = (location: string, options: ReadViewOptions = {}): Promise<ViewModel> => withViewModel(location, options, ({ model }) => model);
