/**
 * `npm run build`, after tsc: bundles the session page (src/view/page/) into
 * dist/view/page.bundle.js, a module exporting its script and styles, which the published
 * package loads instead of bundling (src/view/page-asset.ts).
 */
import { writeFileSync } from "node:fs";
import { bundlePage } from "../src/view/page-build.js";

const asset = await bundlePage();
const target = new URL("../dist/view/page.bundle.js", import.meta.url);
writeFileSync(target, `export const js = ${JSON.stringify(asset.js)};\nexport const css = ${JSON.stringify(asset.css)};\n`);
console.log(`page bundle: ${Math.round((asset.js.length + asset.css.length) / 1024)} KB`);
