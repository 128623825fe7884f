/**
 * `bonsai export --html | --md`: the session page as one self-contained file, or Markdown of the
 * active path, bounded to `maxBytes` (bodies clipped with a note, bound.ts). Reads the session
 * read-only (source.ts).
 */
import { CliError } from "../util/cli-error.js";
import { boundBodies } from "./bound.js";
import { pageHtml } from "./html.js";
import { sessionMarkdown } from "./markdown.js";
import type { ViewModel } from "./model.js";
import { pageAsset } from "./page-asset.js";
import { type ReadViewOptions, readViewModel } from "./source.js";

/** The default bound of an export: room for a long session, small enough for a browser tab. */
export const DEFAULT_MAX_BYTES = 20 * 1024 * 1024;

export interface ExportOptions extends Omit<ReadViewOptions, "withBodies"> {
  format: "html" | "md";
  /** Markdown of every entry instead of the active path */
  all?: boolean;
  maxBytes?: number;
}

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text).length;

/**
 * Renders `model` with its bodies bounded so the result takes at most `maxBytes`. The bodies'
 * budget starts at what is left beside the page without bodies and is lowered by what the
 * rendering adds (escapes, Markdown around each block) until the result fits.
 */
export function boundedRender(full: ViewModel, maxBytes: number, render: (model: ViewModel) => string): string {
  const whole = render(full);
  let model = full;
  if (bytes(whole) <= maxBytes) return whole;
  let skeleton = bytes(render({ ...model, bodies: {}, omitted: { blocks: 0, bytes: 0, maxBytes } }));
  // a session of very many entries: the tree's previews are shortened before giving up
  for (const length of [40, 0]) {
    if (skeleton + 400 <= maxBytes) break;
    model = { ...model, nodes: model.nodes.map((n) => ({ ...n, preview: n.preview.slice(0, length) })) };
    skeleton = bytes(render({ ...model, bodies: {}, omitted: { blocks: 0, bytes: 0, maxBytes } }));
  }
  if (skeleton + 400 > maxBytes) {
    throw new CliError(`--max-bytes ${maxBytes} is too small: the page without any bodies takes ${skeleton} bytes`);
  }
  let budget = maxBytes - skeleton - 400;
  for (let attempt = 0; attempt < 12 && budget > 0; attempt++) {
    const bounded = boundBodies(model.bodies ?? {}, budget);
    const text = render({ ...model, bodies: bounded.bodies, omitted: { ...bounded.omitted, maxBytes } });
    const size = bytes(text);
    if (size <= maxBytes) return text;
    budget -= Math.max(size - maxBytes, Math.ceil(budget * 0.05));
  }
  // Every body clipped to nothing still leaves a note each, which for tens of thousands of entries
  // outgrows the bound: keep the clipped bodies of the newest entries on the active path first, as
  // many as fit (halving until the page does), and none when even one does not.
  const bounded = boundBodies(model.bodies ?? {}, 0);
  const order = [...model.activePath].reverse().filter((id) => id in bounded.bodies);
  const onPath = new Set(order);
  order.push(...Object.keys(bounded.bodies).filter((id) => !onPath.has(id)));
  const leftOut = { blocks: bounded.omitted.blocks, bytes: bytes(JSON.stringify(model.bodies ?? {})), maxBytes };
  for (let keep = order.length; ; keep = Math.floor(keep / 2)) {
    const bodies = Object.fromEntries(order.slice(0, keep).map((id) => [id, bounded.bodies[id]]));
    const text = render({ ...model, bodies, omitted: keep === order.length ? { ...bounded.omitted, maxBytes } : leftOut });
    if (keep === 0 || bytes(text) <= maxBytes) return text;
  }
}

export async function exportSession(location: string, options: ExportOptions): Promise<string> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const model = await readViewModel(location, { ...options, withBodies: true });
  if (options.format === "md") return boundedRender(model, maxBytes, (m) => sessionMarkdown(m, { all: options.all }));
  const asset = await pageAsset();
  const title = `${model.session.name ?? model.session.id} · bonsai`;
  return boundedRender(model, maxBytes, (m) => pageHtml(asset, "export", m, title));
}
