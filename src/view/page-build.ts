/**
 * Bundling the page (src/view/page/main.ts and its styles, with marked and DOMPurify) into one
 * script and one stylesheet with esbuild: at build time for dist/ (scripts/build-page.ts), and in
 * memory for a run from the sources (page-asset.ts). esbuild is a development dependency only.
 */
import { fileURLToPath } from "node:url";
import type { PageAsset } from "./html.js";

const ENTRY = fileURLToPath(new URL("./page/main.ts", import.meta.url));

export async function bundlePage(): Promise<PageAsset> {
  let esbuild: typeof import("esbuild");
  try {
    esbuild = await import("esbuild");
  } catch {
    throw new Error("the session page is not built: run `npm run build` (esbuild bundles it)");
  }
  const result = await esbuild.build({
    entryPoints: [ENTRY],
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "none",
    write: false,
    outdir: "page",
    logLevel: "silent",
  });
  const text = (ext: string) => result.outputFiles.find((f) => f.path.endsWith(ext))?.text ?? "";
  return { js: text(".js"), css: text(".css") };
}
