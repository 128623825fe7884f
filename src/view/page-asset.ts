/**
 * The page's script and styles (src/view/page/, bundled with marked and DOMPurify). `npm run
 * build` bundles them once into dist/view/page.bundle.js (scripts/build-page.ts), which the
 * published package loads; a run from the sources (tests, `node --import tsx`) bundles them in
 * memory with esbuild, a development dependency (docs/ARCHITECTURE.md, "See a session").
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { PageAsset } from "./html.js";

let cached: Promise<PageAsset> | undefined;

/** The bundled page, from dist/ or built from the sources; built once per process. */
export function pageAsset(): Promise<PageAsset> {
  cached ??= loadAsset();
  return cached;
}

async function loadAsset(): Promise<PageAsset> {
  const bundled = new URL("./page.bundle.js", import.meta.url);
  if (existsSync(fileURLToPath(bundled))) return (await import(bundled.href)) as PageAsset;
  const { bundlePage } = await import("./page-build.js");
  return bundlePage();
}
