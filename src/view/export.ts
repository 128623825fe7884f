/**
 * `bonsai export --html | --md`: the session page as one self-contained file, or Markdown of the
 * active path, bounded to `maxBytes` (bodies clipped with a note, bound.ts). Reads the session
 * read-only (source.ts).
 */
import { CliError } from "../util/cli-error.js";
import { BodySource, boundBodies, measureBodies } from "./bound.js";
import { pageHtml } from "./html.js";
import { sessionMarkdown } from "./markdown.js";
import type { ViewModel } from "./model.js";
import { pageAsset } from "./page-asset.js";
import { type OpenViewModel, type ReadViewOptions, readViewModel, withViewModel } from "./source.js";
import { type ArchivedOriginals, entryBlocks } from "./blocks.js";
import { archivedOriginals } from "../storage/archive.js";

/** The default bound of an export: room for a long session, small enough for a browser tab. */
export const DEFAULT_MAX_BYTES = 20 * 1024 * 1024;

export interface ExportOptions extends Omit<ReadViewOptions, "withBodies" | "withDrops"> {
  format: "html" | "md";
  /** Markdown of every entry instead of the active path */
  all?: boolean;
  maxBytes?: number;
}

const bytes = (text: string) => Buffer.byteLength(text, "utf8");

/**
 * The least share of its bodies' JSON a render takes: the page embeds that JSON (1); Markdown
 * writes the text unescaped, and JSON escapes a control character in 6 bytes.
 */
const PAGE_SHARE = 1;
const MARKDOWN_SHARE = 1 / 6;

/**
 * Renders `model` with its bodies bounded so the result takes at most `maxBytes`. The bodies are
 * measured once; their budget starts at what is left beside the page without bodies and is
 * lowered by what the rendering adds (Markdown around each block) until the result fits, which
 * is most often the first render. When not all bodies can be kept readable, the newest entries
 * of the active path are kept first (bound.ts).
 */
export function boundedRender(
  full: ViewModel,
  maxBytes: number,
  render: (model: ViewModel) => string,
  bodiesShare = MARKDOWN_SHARE,
  /** the bodies, when they are made as bounding asks for them instead of being in `full` */
  source: BodySource = BodySource.of(full.bodies ?? {}),
): string {
  const measure = measureBodies(source);
  const skeletonOf = (model: ViewModel) => bytes(render({ ...model, bodies: {}, omitted: { blocks: 0, bytes: 0, maxBytes } }));
  let model = full;
  let skeleton = skeletonOf(model);
  // rendered whole unless it plainly cannot fit: the render takes at least `bodiesShare` of the
  // bodies' JSON (their lower bound from lengths first, which spares serializing 100 MB to see it)
  const fitsWhole = (bytes: number) => skeleton + bytes * bodiesShare <= maxBytes;
  if (fitsWhole(measure.floor(Number.POSITIVE_INFINITY)) && fitsWhole(measure.full)) {
    const whole = render({ ...full, bodies: source.pick() });
    if (bytes(whole) <= maxBytes) return whole;
  }
  // a session of very many entries: the tree's previews are shortened before giving up
  for (const length of [40, 0]) {
    if (skeleton + 400 <= maxBytes) break;
    model = { ...model, nodes: model.nodes.map((n) => ({ ...n, preview: n.preview.slice(0, length) })) };
    skeleton = skeletonOf(model);
  }
  if (skeleton + 400 > maxBytes) {
    throw new CliError(`--max-bytes ${maxBytes} is too small: the page without any bodies takes ${skeleton} bytes`);
  }
  // the newest entries of the active path first, then the others, newest first: what to keep when not all fit
  const onPath = new Set(model.activePath);
  const order = [...model.activePath].reverse().concat(model.nodes.filter((n) => !onPath.has(n.id)).map((n) => n.id).reverse());
  for (let budget = maxBytes - skeleton - 400, attempt = 0; attempt < 12 && budget > 0; attempt++) {
    const bounded = boundBodies(source, budget, measure, order);
    const text = render({ ...model, bodies: bounded.bodies, omitted: { ...bounded.omitted, maxBytes } });
    const size = bytes(text);
    if (size <= maxBytes) return text;
    budget -= Math.max(size - maxBytes, Math.ceil(budget * 0.05));
  }
  // no body fits beside the page: the page alone, which says so
  const blocks = measure.ids().reduce((n, id) => n + measure.blocks(id), 0);
  const { bytes: all, estimated } = measure.approximate();
  return render({ ...model, bodies: {}, omitted: { blocks, bytes: all, maxBytes, ...(estimated ? { estimated } : {}) } });
}

/**
 * The bodies of a page's rows, each read from the open session when bounding first asks for it;
 * the lengths of a message's body come from its digest until then, so a bound that keeps the
 * newest bodies of a large session reads those, not every one.
 */
function sessionBodies({ model, session, digests }: OpenViewModel, archived: ArchivedOriginals): BodySource {
  return new BodySource(
    model.nodes.map((node) => node.id),
    (id) => {
      const entry = session.getEntry(id);
      return entry && entryBlocks(entry, archived);
    },
    (id) => digests.get(id)?.lengths,
  );
}

export async function exportSession(location: string, options: ExportOptions): Promise<string> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (options.format === "md") {
    const model = await readViewModel(location, { ...options, withBodies: true, withDrops: false });
    // the bodies Markdown shows: the active path's, or every one with --all
    const shown = options.all ? model.bodies : Object.fromEntries(model.activePath.flatMap((id) => (model.bodies?.[id] ? [[id, model.bodies[id]]] : [])));
    return boundedRender({ ...model, bodies: shown }, maxBytes, (m) => sessionMarkdown(m, { all: options.all }), MARKDOWN_SHARE);
  }
  const [asset, archived] = await Promise.all([pageAsset(), archivedOriginals(location, options.onWarning)]);
  return withViewModel(location, { ...options, withBodies: false, withDrops: true }, (read) => {
    const title = `${read.model.session.name ?? read.model.session.id} · bonsai`;
    return boundedRender(read.model, maxBytes, (m) => pageHtml(asset, "export", m, title), PAGE_SHARE, sessionBodies(read, archived));
  });
}
