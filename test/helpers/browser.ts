/**
 * The machine's Chromium driven by playwright-core, for the browser tests (`npm run
 * test:browser`) and the README's screenshots. The browser is Debian's `chromium` package (or
 * BONSAI_CHROMIUM), launched headless; --no-sandbox because CI runs as root.
 */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { Browser } from "playwright-core";

const NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

/** The Chromium executable: BONSAI_CHROMIUM, else the first of the usual names on PATH. */
export function findChromium(): string | undefined {
  if (process.env.BONSAI_CHROMIUM) return process.env.BONSAI_CHROMIUM;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    for (const name of NAMES) {
      const path = join(dir, name);
      try {
        accessSync(path, constants.X_OK);
        return path;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error("no Chromium found: `apt-get install -y chromium`, or set BONSAI_CHROMIUM to a Chromium executable");
  const { chromium } = await import("playwright-core");
  return chromium.launch({ executablePath, args: ["--no-sandbox"], headless: true });
}
