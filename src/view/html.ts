/**
 * The one HTML file of the session page: styles, the bundled script and, for an export, the
 * view model with every body, all inline, so it opens from file:// with no network. `bonsai
 * view` serves the same page without the model, which the script then asks the server for.
 */
import type { ViewModel } from "./model.js";

/** The page's bundled script and styles (page-asset.ts). */
export interface PageAsset {
  js: string;
  css: string;
}

export type PageMode = "export" | "live";

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** JSON that cannot end the <script> element it sits in. */
export function inlineJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}

/**
 * The model's tree rows as inline JSON, kept for the array they came from: bounding an export
 * renders the page more than once with the same rows and other bodies, and the rows of a large
 * session are most of the page (16 MB for 50,000 entries).
 */
const nodesJson = new WeakMap<object, string>();

/** inlineJson of a view model, its rows serialized once per rows array. */
function modelJson(model: ViewModel): string {
  const { nodes, ...rest } = model;
  let rows = nodesJson.get(nodes);
  if (rows === undefined) {
    rows = inlineJson(nodes);
    nodesJson.set(nodes, rows);
  }
  const others = inlineJson(rest);
  return `{"nodes":${rows}${others === "{}" ? "" : `,${others.slice(1, -1)}`}}`;
}

/** The page; `model` is embedded for an export and left out for `bonsai view`. */
export function pageHtml(asset: PageAsset, mode: PageMode, model: ViewModel | null, title: string): string {
  const script = asset.js.replace(/<\/(script)/gi, "<\\/$1");
  const css = asset.css.replace(/<\/(style)/gi, "<\\/$1");
  const data = model ? `<script id="bonsai-data" type="application/json">${modelJson(model)}</script>\n` : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; base-uri 'none'">
<meta name="generator" content="bonsai">
<title>${escapeHtml(title)}</title>
<style>${css}</style>
</head>
<body data-mode="${mode}">
<div id="app"></div>
<script id="bonsai-config" type="application/json">${inlineJson({ mode })}</script>
${data}<script>${script}</script>
</body>
</html>
`;
}
