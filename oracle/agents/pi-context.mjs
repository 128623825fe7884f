// Asks a real pi for the context of sessions: run by the pi's own Node with the folder of its
// package (`…/pi-coding-agent`) as the first argument. Reads a JSON list of {file, leaf?} on
// stdin and prints one JSON list of {leafId, messages, thinkingLevel, model} or {error}.
// pi's open may write to the file it opens (a missing last newline, a migration), so each is
// opened as a copy in a folder of its own; the original is checked to be unchanged.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

const [packageDir] = process.argv.slice(2);
const { SessionManager } = await import(join(packageDir, "dist/core/session-manager.js"));
const requests = JSON.parse(readFileSync(0, "utf8"));

function contextOf({ file, leaf }) {
  const dir = mkdtempSync(join(tmpdir(), "bonsai-oracle-pi-"));
  try {
    const copy = join(dir, basename(file));
    copyFileSync(file, copy);
    const session = SessionManager.open(copy, dir);
    if (leaf === null) session.resetLeaf();
    else if (leaf !== undefined) session.branch(leaf);
    const context = session.buildSessionContext();
    return { leafId: session.getLeafId(), messages: context.messages, thinkingLevel: context.thinkingLevel, model: context.model ?? null };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = requests.map((request) => {
  const before = readFileSync(request.file);
  const result = contextOf(request);
  if (!before.equals(readFileSync(request.file))) throw new Error(`${request.file}: changed by the oracle`);
  return result;
});
process.stdout.write(JSON.stringify(results));
