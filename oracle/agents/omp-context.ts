// Asks oh-my-pi for the context of sessions: run by its Bun with the folder of its package
// (`…/@oh-my-pi/pi-coding-agent`) as the first argument. Reads a JSON list of {file, leaf?} on
// stdin and prints one JSON list of {leafId, messages, thinkingLevel, model, title} or {error}.
// omp keeps state under its agent folder and HOME: both point into a folder that is removed
// after; each session is opened as a copy, and the original is checked to be unchanged.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { isolatedOmpHome } from "./omp-home.ts";

const [packageDir] = process.argv.slice(2);
const home = isolatedOmpHome();
const { SessionManager } = await import(join(packageDir, "src/session/session-manager.ts"));
const requests: { file: string; leaf?: string | null }[] = JSON.parse(readFileSync(0, "utf8"));

const results = [];
try {
  for (const { file, leaf } of requests) {
    const dir = mkdtempSync(join(home, "s-"));
    const before = readFileSync(file);
    try {
      const copy = join(dir, basename(file));
      copyFileSync(file, copy);
      const session = await SessionManager.open(copy, dir, undefined, { suppressBreadcrumb: true, initialCwd: home });
      if (leaf === null) session.resetLeaf();
      else if (leaf !== undefined) session.branch(leaf);
      const context = session.buildSessionContext();
      const model: string | undefined = context.models.default;
      const slash = model ? model.indexOf("/") : -1;
      results.push({
        leafId: session.getLeafId(),
        messages: context.messages,
        thinkingLevel: context.thinkingLevel,
        model: model ? { provider: model.slice(0, slash), modelId: model.slice(slash + 1) } : null,
        title: session.getSessionName() ?? null,
      });
    } catch (error) {
      results.push({ error: error instanceof Error ? error.message : String(error) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    if (!before.equals(readFileSync(file))) throw new Error(`${file}: changed by the oracle`);
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(results));
