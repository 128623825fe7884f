/**
 * The README's pictures of the session page: the example session, pruned and compacted by bonsai,
 * exported with `bonsai export --html` and photographed in the machine's Chromium, light and dark.
 *
 *   node --import tsx scripts/screenshots.ts      writes docs/images/session-page*.png
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { launchBrowser } from "../test/helpers/browser.js";
import { compactedExample } from "../test/helpers/view-sessions.js";

const ROOT = resolve(import.meta.dirname, "..");
const OUT = join(ROOT, "docs/images");
const dir = mkdtempSync(join(tmpdir(), "bonsai-shots-"));
try {
  const { file, compactionId } = await compactedExample(dir);
  const html = join(dir, "session.html");
  // run from the session's folder, so the page names it as a user would see it
  const tsx = import.meta.resolve("tsx");
  execFileSync(process.execPath, ["--import", tsx, join(ROOT, "src/cli/main.ts"), "export", basename(file), "--html", "-o", html, "--context-window", "200000"], { cwd: dir, stdio: "inherit" });
  mkdirSync(OUT, { recursive: true });
  const browser = await launchBrowser();
  try {
    for (const theme of ["light", "dark"] as const) {
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, colorScheme: theme });
      await page.goto(`${pathToFileURL(html).href}#${compactionId}`);
      await page.waitForSelector("body[data-ready=true]");
      await page.locator(`#entries article[data-id="${compactionId}"] details.compaction-summary > summary`).click();
      await page.waitForTimeout(200);
      const path = join(OUT, theme === "light" ? "session-page.png" : "session-page-dark.png");
      await page.screenshot({ path });
      console.log(`wrote ${path}`);
      await page.close();
    }
  } finally {
    await browser.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
