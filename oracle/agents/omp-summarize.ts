// Asks oh-my-pi to summarize sessions through a remote endpoint (its `compaction.remoteEndpoint`):
// run by its Bun with the folder of its package (`…/@oh-my-pi/pi-coding-agent`) as the first
// argument. Reads {file, endpoint, modelIds} on stdin; for each model id it builds the context of
// the session and calls omp's own generateSummary, which writes the transcript in that model's
// markup (one of ten forms, chosen by the id) and posts it to the endpoint. Prints a JSON list of
// {modelId, dialect, summary} or {modelId, error}.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { isolatedOmpHome } from "./omp-home.ts";

const [packageDir] = process.argv.slice(2);
const home = isolatedOmpHome();
const scope = join(packageDir, "..");
const { SessionManager } = await import(join(packageDir, "src/session/session-manager.ts"));
const { convertToLlm } = await import(join(packageDir, "src/session/messages.ts"));
const { generateSummary } = await import(join(scope, "pi-agent-core/src/compaction/compaction.ts"));
const { preferredDialect } = await import(join(scope, "pi-catalog/src/identity/dialect.ts"));
const request: { file: string; endpoint: string; modelIds: string[] } = JSON.parse(readFileSync(0, "utf8"));

const results = [];
try {
  const dir = mkdtempSync(join(home, "s-"));
  const copy = join(dir, basename(request.file));
  copyFileSync(request.file, copy);
  const session = await SessionManager.open(copy, dir, undefined, { suppressBreadcrumb: true, initialCwd: home });
  const { messages } = session.buildSessionContext();
  for (const modelId of request.modelIds) {
    const model = { id: modelId, name: modelId, provider: "bonsai-oracle", api: "openai-completions", baseUrl: "http://127.0.0.1:9", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 200_000, maxTokens: 8192 };
    try {
      const summary = await generateSummary(messages, model, 16_384, "oracle-key", undefined, undefined, undefined, { remoteEndpoint: request.endpoint, convertToLlm });
      results.push({ modelId, dialect: preferredDialect(modelId), summary });
    } catch (error) {
      results.push({ modelId, dialect: preferredDialect(modelId), error: error instanceof Error ? error.message : String(error) });
    }
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(results));
