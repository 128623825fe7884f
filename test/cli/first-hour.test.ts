/**
 * Issue 19: what a new user trips over in the first hour with the CLI, each end to end on a copy
 * of the bundled example or a small generated session.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ROOT, runBonsai, spawnBonsai } from "../helpers/cli.js";
import { refusedPort } from "../helpers/refused-port.js";

const EXAMPLE = join(ROOT, "examples/coding-session.jsonl");
const tmp = mkdtempSync(join(tmpdir(), "bonsai-first-hour-"));
after(() => rmSync(tmp, { recursive: true, force: true }));
let copies = 0;
function copyOfExample(): string {
  const file = join(tmp, `example-${++copies}.jsonl`);
  copyFileSync(EXAMPLE, file);
  return file;
}

describe("item 5: a connection error names the URL and why", () => {
  it("compact --base-url where nothing listens says which URL and that the connection was refused, in one line", async () => {
    const port = await refusedPort();
    const run = await runBonsai(["compact", copyOfExample(), "--base-url", `http://127.0.0.1:${port}/v1`]);
    assert.equal(run.code, 1);
    const lines = run.stderr.split("\n").filter((l) => l !== "" && !l.startsWith("warning:"));
    assert.equal(lines.length, 1, run.stderr);
    assert.match(lines[0], new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}/v1\\S*: connection refused \\(ECONNREFUSED\\)`));
  });

  it("compact --remote where nothing listens names the URL and the reason once", async () => {
    const port = await refusedPort();
    const url = `http://127.0.0.1:${port}/summarize`;
    const run = await runBonsai(["compact", copyOfExample(), "--remote", url]);
    assert.equal(run.code, 1);
    const lines = run.stderr.split("\n").filter((l) => l !== "" && !l.startsWith("warning:"));
    assert.equal(lines.length, 1, run.stderr);
    assert.equal(lines[0].split(url).length - 1, 1, `the URL once: ${lines[0]}`);
    assert.equal(lines[0].match(/ECONNREFUSED/g)?.length, 1, `the reason once: ${lines[0]}`);
  });
});

describe("item 6: bonsai prune says what it found", () => {
  it("a refusal gives what could be saved, the minimum, and which tool outputs dominate", async () => {
    const file = copyOfExample();
    const run = await runBonsai(["prune", file, "--dry-run", "--protect", "0"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /nothing to prune in .*: pruning would save [\d,]+ tokens, less than the minimum of 20,000 \(--min-savings\)/);
    assert.match(run.stdout, /tool output in the context: [\d,]+ tokens in \d+ results; the newest 0 tokens are protected \(--protect\)/);
    // one line per tool, largest first, `read` marked as never pruned
    const tools = [...run.stdout.matchAll(/^ {2}(\w+) +(\d+) results? +([\d,]+) tokens/gm)];
    assert.ok(tools.length >= 2, run.stdout);
    const tokens = tools.map((m) => Number(m[3].replace(/,/g, "")));
    assert.deepEqual([...tokens].sort((x, y) => y - x), tokens);
    assert.match(run.stdout, /^ {2}read +\d+ results? +[\d,]+ tokens +never pruned/m);
    const json = JSON.parse((await runBonsai(["prune", file, "--dry-run", "--protect", "0", "--json"])).stdout);
    assert.equal(json.prunedCount, 0);
    assert.equal(json.minimumSavings, 20_000);
    assert.ok(json.couldSave > 0 && json.couldSave < 20_000);
    assert.ok(json.byTool.some((t: { toolName: string; neverPruned: boolean }) => t.toolName === "read" && t.neverPruned));
  });

  it("--dry-run lists the entries as a table of id, tool and tokens, capped by --limit", async () => {
    const file = copyOfExample();
    const run = await runBonsai(["prune", file, "--dry-run", "--protect", "0", "--min-savings", "0", "--limit", "5"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^ {2}id {7}tool +tokens$/m);
    const rows = [...run.stdout.matchAll(/^ {2}([0-9a-f]{8}) +(\w+) +([\d,]+)$/gm)];
    assert.equal(rows.length, 5, run.stdout);
    assert.match(run.stdout, /… and \d+ more \(--limit N shows more, --json all\)/);
  });
});

describe("item 12: bonsai ls titles pi sessions", () => {
  it("uses the session name when set, otherwise the first user message; ids are session ids; counts are singular for one", async () => {
    const dir = join(tmp, "ls");
    mkdirSync(dir);
    const header = (id: string) => ({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" });
    const user = (id: string, parentId: string | null, content: unknown) => ({
      type: "message",
      id,
      parentId,
      timestamp: "2026-01-01T00:00:01.000Z",
      message: { role: "user", content, timestamp: 1 },
    });
    const jsonl = (lines: unknown[]) => `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
    writeFileSync(join(dir, "a.jsonl"), jsonl([header("s-first"), user("u1", null, [{ type: "text", text: "Fix the flaky\nlogin test" }])]));
    const one = await runBonsai(["ls", dir]);
    assert.match(one.stdout, /Fix the flaky login test/);
    assert.match(one.stdout, /^1 session, /m);
    writeFileSync(
      join(dir, "b.jsonl"),
      jsonl([header("s-named"), user("u1", null, "ignored for the title"), { type: "session_info", id: "i1", parentId: "u1", timestamp: "2026-01-01T00:00:02.000Z", name: "Login work" }]),
    );
    const listed = JSON.parse((await runBonsai(["ls", dir, "--json"])).stdout) as { id: string; title: string | null; location: string }[];
    const byId = new Map(listed.map((s) => [s.id, s]));
    assert.equal(byId.get("s-first")?.title, "Fix the flaky login test");
    assert.equal(byId.get("s-named")?.title, "Login work");
    assert.equal(byId.get("s-first")?.location, join(dir, "a.jsonl"));
    // a database store titles it the same way
    const db = `sqlite:${join(tmp, "ls.db")}`;
    for (const name of ["a.jsonl", "b.jsonl"]) assert.equal((await runBonsai(["copy", join(dir, name), db])).code, 0);
    const inDb = JSON.parse((await runBonsai(["ls", db, "--json"])).stdout) as { id: string; title: string | null }[];
    assert.deepEqual(new Map(inDb.map((s) => [s.id, s.title])), new Map([["s-first", "Fix the flaky login test"], ["s-named", "Login work"]]));
  });
});

describe("item 10: small inconsistencies", () => {
  it("a usage error is one line, suggestion included", async () => {
    for (const args of [["tree", EXAMPLE, "--jsn"], ["nope"], ["context", EXAMPLE, "--leaf"]]) {
      const run = await runBonsai(args);
      assert.equal(run.code, 2, args.join(" "));
      assert.equal(run.stderr.trimEnd().split("\n").length, 1, JSON.stringify(run.stderr));
      assert.match(run.stderr, /^bonsai: .*\(see bonsai --help\)\n$/);
    }
    assert.match((await runBonsai(["tree", EXAMPLE, "--jsn"])).stderr, /unknown option '--jsn' \(did you mean --json\?\)/);
  });

  it("a bad size names its option, as a usage error", async () => {
    for (const [size, why] of [["0", 'size "0" must be at least 1 byte'], ["zz", '"zz" is not a size']]) {
      const run = await runBonsai(["serve", "--extractive", "--max-body", size]);
      assert.equal(run.code, 2, run.stderr);
      assert.ok(run.stderr.startsWith(`bonsai: serve: --max-body: ${why}`), run.stderr);
    }
  });

  it("serve --extractive does not warn that no model is configured", async () => {
    const run = await spawnBonsai(["serve", "--extractive", "--port", "0"], (child) => {
      child.stdout?.on("data", (d) => {
        if (String(d).includes('"event":"listening"')) child.kill("SIGTERM");
      });
    });
    assert.match(run.stdout, /"event":"listening"/);
    assert.doesNotMatch(run.stderr, /no model configured/);
  });

  it("options that have no effect say so: a model for serve --extractive, --replace-instructions without instructions", async () => {
    const serve = await spawnBonsai(["serve", "--extractive", "--model", "anthropic/x", "--base-url", "http://127.0.0.1:9/v1", "--port", "0"], (child) => {
      child.stdout?.on("data", (d) => {
        if (String(d).includes('"event":"listening"')) child.kill("SIGTERM");
      });
    });
    assert.match(serve.stderr, /^warning: --extractive summarizes without a model: --model, --base-url have no effect$/m);
    const file = copyOfExample();
    const before = readFileSync(file);
    const checkout = await runBonsai(["checkout", file, "0bd6170e", "--replace-instructions", "--dry-run"]);
    assert.equal(checkout.code, 0, checkout.stderr);
    assert.match(checkout.stderr, /^warning: --replace-instructions has no effect without --instructions$/m);
    assert.deepEqual(readFileSync(file), before);
  });

  it("ls of a database location with #ID lists that session, and says when there is none", async () => {
    const db = `sqlite:${join(tmp, "one.db")}`;
    const copied = await runBonsai(["copy", EXAMPLE, db]);
    const location = /-> (sqlite:\S+#\S+)/.exec(copied.stdout)?.[1] as string;
    assert.equal((await runBonsai(["copy", EXAMPLE, `${db}#another`])).code, 0);
    const one = JSON.parse((await runBonsai(["ls", location, "--json"])).stdout) as { location: string }[];
    assert.deepEqual(one.map((s) => s.location), [location]);
    const none = await runBonsai(["ls", `${db}#nope`]);
    assert.equal(none.code, 1);
    assert.equal(none.stderr, `bonsai: ${db}#nope: no such session in the store\n`);
  });

  it("an id prefix shorter than 4 characters says so", async () => {
    const run = await runBonsai(["context", EXAMPLE, "--leaf", "5d1"]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^bonsai: entry id "5d1" is too short: give at least 4 characters/);
  });

  it("label says labeled, as the chat does (test/chat/e2e-tree.test.ts)", async () => {
    const file = copyOfExample();
    const run = await runBonsai(["label", file, "0bd6170e", "start"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^labeled 0bd6170e \[start\]/);
  });
});

describe("item 8: long output can be narrowed", () => {
  const entryLines = (stdout: string) => stdout.split("\n").filter((l) => /^[\s│├└─]*[0-9a-f]{8} /.test(l));
  const idOf = (line: string) => /([0-9a-f]{8}) /.exec(line)![1];

  it("tree --branch shows only the path to the leaf, flat; --labels only labeled entries; both with a legend", async () => {
    const { SessionManager } = await import("../../src/session/manager.js");
    const session = SessionManager.open(EXAMPLE, { readOnly: true });
    const branch = session.getBranch().filter((e) => !(e.type === "custom" && e.customType === "bonsai.checkout"));
    const labeled = session.getEntries().filter((e) => session.getLabel(e.id) !== undefined).map((e) => e.id);
    session.close();
    const run = await runBonsai(["tree", EXAMPLE, "--branch"]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(entryLines(run.stdout).map(idOf), branch.map((e) => e.id));
    assert.ok(entryLines(run.stdout).every((l) => !/[├└]─/.test(l)), "flat");
    assert.match(run.stdout, /\nlegend: .*← leaf.*\[label\]/);
    const labels = await runBonsai(["tree", EXAMPLE, "--labels"]);
    assert.deepEqual(entryLines(labels.stdout).map(idOf).sort(), [...labeled].sort());
    assert.ok(entryLines(labels.stdout).every((l) => /\[[^\]]+\]/.test(l)));
  });

  it("tree --since ID shows that entry and what follows it; --depth N at most N levels, saying what is left out", async () => {
    const since = await runBonsai(["tree", EXAMPLE, "--since", "ea7c7cbe"]);
    assert.equal(since.code, 0, since.stderr);
    const lines = entryLines(since.stdout);
    assert.equal(idOf(lines[0]), "ea7c7cbe");
    const all = entryLines((await runBonsai(["tree", EXAMPLE])).stdout);
    assert.ok(lines.length < all.length);
    const deep = await runBonsai(["tree", EXAMPLE, "--depth", "5"]);
    assert.equal(entryLines(deep.stdout).length, 5);
    assert.match(deep.stdout, /… \d+ more entries below \(--depth\)/);
  });

  it("compact --quiet leaves the summary out; checkout --dry-run explains + and -, and --quiet leaves the list out", async () => {
    const compacted = await runBonsai(["compact", copyOfExample(), "--quiet"]);
    assert.equal(compacted.code, 0, compacted.stderr);
    assert.match(compacted.stdout, /^compacted /);
    assert.doesNotMatch(compacted.stdout, /summary:\n/);
    assert.ok(compacted.stdout.trim().split("\n").length <= 8, compacted.stdout);
    const dry = await runBonsai(["checkout", EXAMPLE, "0bd6170e", "--dry-run"]);
    assert.match(dry.stdout, /^\+ goes to the summarizer, - is left out/m);
    const quiet = await runBonsai(["checkout", EXAMPLE, "0bd6170e", "--dry-run", "--quiet"]);
    assert.doesNotMatch(quiet.stdout, /^ {2}[+-] /m);
    assert.match(quiet.stdout, /entries left behind/);
  });
});

describe("item 11: JSON output", () => {
  it("copy --json gives absolute locations on both sides; a --json failure is JSON on stdout too", async () => {
    const run = await runBonsai(["copy", "examples/coding-session.jsonl", `sqlite:${join(tmp, "c.db")}`, "--json"]);
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout);
    assert.equal(result.from, EXAMPLE);
    assert.match(result.to, new RegExp(`^sqlite:${tmp.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/c\\.db#`));
    const failed = await runBonsai(["tree", join(tmp, "nope.jsonl"), "--json"]);
    assert.equal(failed.code, 1);
    assert.deepEqual(JSON.parse(failed.stdout), { error: `${join(tmp, "nope.jsonl")}: no such file`, code: "NOT_FOUND" });
    assert.match(failed.stderr, /^bonsai: .*no such file\n$/);
    const usage = await runBonsai(["tree", EXAMPLE, "--json", "--depth", "x"]);
    assert.equal(usage.code, 2);
    assert.equal(JSON.parse(usage.stdout).code, "USAGE");
  });
});

describe("a warning is said once", () => {
  it("one missing parent gives one warning, also from compact, which opens the session to plan and again to write", async () => {
    const file = join(tmp, "missing-parent.jsonl");
    const lines = readFileSync(EXAMPLE, "utf8").split("\n");
    lines.splice(19, 1); // an entry that another one names as its parent
    writeFileSync(file, lines.join("\n"));
    const run = await runBonsai(["compact", file]);
    assert.equal(run.code, 0, run.stderr);
    const parents = run.stderr.split("\n").filter((l) => /points at missing parent/.test(l));
    assert.equal(parents.length, 1, run.stderr);
  });
});
