/**
 * Issue 27: `bonsai settings` shows the settings in effect in a folder and where each comes from:
 * a default, the user's file or the project's, the project winning key by key.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { BONSAI_ARGS } from "../helpers/bonsai-bin.js";
import { tempDir } from "../helpers/session-builders.js";

const temp = tempDir();
after(temp.cleanup);

function bonsaiIn(cwd: string, home: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(process.execPath, [...BONSAI_ARGS, ...args], { cwd, env: { ...process.env, HOME: home, NO_COLOR: "1" } }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code) || 1 : 0, stdout, stderr }),
    ),
  );
}

describe("bonsai settings", () => {
  const home = join(temp.dir, "home");
  const project = join(temp.dir, "project");
  mkdirSync(join(home, ".bonsai"), { recursive: true });
  mkdirSync(join(project, ".bonsai"), { recursive: true });
  writeFileSync(join(home, ".bonsai", "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 12000 }, retry: { maxRetries: 5 } }));
  writeFileSync(join(project, ".bonsai", "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 9000, model: "openai/gpt-5-mini" }, nonsense: {} }));

  it("names the source of every key; the project wins over the user, the user over the defaults", async () => {
    const run = await bonsaiIn(project, home, ["settings", "--json"]);
    assert.equal(run.code, 0, run.stderr);
    const { values, files } = JSON.parse(run.stdout) as { values: { key: string; value: unknown; source: string }[]; files: { path: string; exists: boolean }[] };
    const byKey = new Map(values.map((v) => [v.key, v]));
    assert.deepEqual(byKey.get("compaction.keepRecentTokens"), { key: "compaction.keepRecentTokens", value: 9000, source: join(project, ".bonsai", "settings.json") });
    assert.deepEqual(byKey.get("retry.maxRetries"), { key: "retry.maxRetries", value: 5, source: "~/.bonsai/settings.json" });
    assert.deepEqual(byKey.get("compaction.model")?.value, "openai/gpt-5-mini");
    assert.deepEqual(byKey.get("compaction.enabled"), { key: "compaction.enabled", value: true, source: "default" });
    assert.deepEqual(byKey.get("compaction.remoteEndpoint")?.value, null);
    assert.deepEqual(files, [
      { path: "~/.bonsai/settings.json", exists: true },
      { path: join(project, ".bonsai", "settings.json"), exists: true },
    ]);
    assert.match(run.stderr, /unknown setting "nonsense" ignored/);
  });

  it("prints one line per key, with the file it came from", async () => {
    const run = await bonsaiIn(project, home, ["settings"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^compaction\.keepRecentTokens +9000 +\S*project\/\.bonsai\/settings\.json$/m);
    assert.match(run.stdout, /^retry\.maxRetries +5 +~\/\.bonsai\/settings\.json$/m);
    assert.match(run.stdout, /^compaction\.remoteEndpoint +\(unset\) +default$/m);
  });

  it("a wrong value fails in one line naming the file and key", async () => {
    const bad = join(temp.dir, "bad");
    mkdirSync(join(bad, ".bonsai"), { recursive: true });
    writeFileSync(join(bad, ".bonsai", "settings.json"), JSON.stringify({ retry: { maxRetries: "many" } }));
    const run = await bonsaiIn(bad, home, ["settings"]);
    assert.equal(run.code, 1);
    assert.match(run.stderr.trim(), /^bonsai: \S*bad\/\.bonsai\/settings\.json: retry\.maxRetries: expected .*, got "many"$/);
  });
});
