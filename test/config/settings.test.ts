import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import {
  DEFAULT_SETTINGS,
  loadSettings,
  mergeSettings,
  parseSettings,
  resolveSettings,
  SettingsError,
  type Settings,
} from "../../src/config/settings.js";

let root: string;
let home: string;
let project: string;

function writeSettings(dir: string, value: unknown): void {
  mkdirSync(join(dir, ".bonsai"), { recursive: true });
  writeFileSync(join(dir, ".bonsai", "settings.json"), typeof value === "string" ? value : JSON.stringify(value));
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "bonsai-"));
  home = join(root, "home");
  project = join(root, "work", "project");
  mkdirSync(home, { recursive: true });
  mkdirSync(project, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("DEFAULT_SETTINGS", () => {
  test("match the reference defaults of spec section 11", () => {
    assert.deepEqual(DEFAULT_SETTINGS, {
      compaction: {
        enabled: true,
        reserveTokens: 16384,
        keepRecentTokens: 20000,
        autoContinue: true,
        models: [],
        backgroundPercent: 80,
        midTurn: true,
        pinFirstRequest: false,
        methods: ["native", "remote", "model", "extractive"],
      },
      branchSummary: { enabled: false, reserveTokens: 16384 },
      retry: { enabled: true, maxRetries: 3, baseDelayMs: 2000 },
      pruning: { maxResultTokens: 8000, supersededReads: true },
    });
  });

  test("cannot be mutated by a caller", () => {
    assert.throws(() => {
      (DEFAULT_SETTINGS.compaction as { reserveTokens: number }).reserveTokens = 1;
    });
    const resolved = resolveSettings();
    resolved.compaction.models.push("a/b");
    assert.deepEqual(DEFAULT_SETTINGS.compaction.models, []);
  });
});

describe("loadSettings", () => {
  test("no files: the defaults", () => {
    assert.deepEqual(loadSettings({ home, cwd: project }), mergeSettings(DEFAULT_SETTINGS as Settings));
  });

  test("project wins over user, key by key within a section", () => {
    writeSettings(home, {
      compaction: { reserveTokens: 1000, keepRecentTokens: 500, models: ["openai/gpt-4o-mini"] },
      retry: { maxRetries: 7 },
    });
    writeSettings(project, { compaction: { reserveTokens: 2000 }, branchSummary: { enabled: true } });
    const settings = loadSettings({ home, cwd: project });
    assert.equal(settings.compaction.reserveTokens, 2000);
    assert.equal(settings.compaction.keepRecentTokens, 500);
    assert.deepEqual(settings.compaction.models, ["openai/gpt-4o-mini"]);
    assert.equal(settings.compaction.enabled, true);
    assert.equal(settings.retry.maxRetries, 7);
    assert.equal(settings.retry.baseDelayMs, 2000);
    assert.equal(settings.branchSummary.enabled, true);
    assert.equal(settings.branchSummary.reserveTokens, 16384);
  });

  test("a project list replaces the user's list", () => {
    writeSettings(home, { compaction: { models: ["a/one", "b/two"] } });
    writeSettings(project, { compaction: { models: ["c/three"] } });
    assert.deepEqual(loadSettings({ home, cwd: project }).compaction.models, ["c/three"]);
  });

  test("a wrong value names the file (with ~) and the key", () => {
    writeSettings(home, { compaction: { reserveTokens: "x" } });
    assert.throws(
      () => loadSettings({ home, cwd: project }),
      (error: unknown) =>
        error instanceof SettingsError &&
        error.message === '~/.bonsai/settings.json: compaction.reserveTokens: expected a positive integer, got "x"',
    );
  });

  test("the project file is named by its path", () => {
    writeSettings(project, { retry: { maxRetries: -1 } });
    assert.throws(() => loadSettings({ home, cwd: project }), {
      message: `${join(project, ".bonsai", "settings.json")}: retry.maxRetries: expected a non-negative integer, got -1`,
    });
  });

  test("invalid JSON is reported with the file", () => {
    writeSettings(home, "{ compaction: ");
    assert.throws(() => loadSettings({ home, cwd: project }), /^SettingsError: ~\/\.bonsai\/settings\.json: invalid JSON/);
  });

  test("unknown sections and keys warn and are dropped", () => {
    writeSettings(home, { compaction: { reserveTokens: 100, colour: "red" }, theme: "dark" });
    const warnings: string[] = [];
    const settings = loadSettings({ home, cwd: project, onWarning: (m) => warnings.push(m) });
    assert.equal(settings.compaction.reserveTokens, 100);
    assert.equal("colour" in settings.compaction, false);
    assert.deepEqual(warnings.sort(), [
      '~/.bonsai/settings.json: unknown setting "compaction.colour" ignored',
      '~/.bonsai/settings.json: unknown setting "theme" ignored',
    ]);
  });

  test("an empty file counts as no settings", () => {
    writeSettings(home, "  \n");
    assert.equal(loadSettings({ home, cwd: project }).compaction.reserveTokens, 16384);
  });
});

describe("parseSettings", () => {
  const bad: [unknown, string][] = [
    [{ compaction: { enabled: "yes" } }, 'src: compaction.enabled: expected true or false, got "yes"'],
    [{ compaction: { keepRecentTokens: 0 } }, "src: compaction.keepRecentTokens: expected a positive integer, got 0"],
    [{ compaction: { keepRecentTokens: 1.5 } }, "src: compaction.keepRecentTokens: expected a positive integer, got 1.5"],
    [{ compaction: { remoteEndpoint: "ftp://x" } }, 'src: compaction.remoteEndpoint: expected an http(s) URL, got "ftp://x"'],
    [{ compaction: { models: ["gpt-4o"] } }, 'src: compaction.models: expected a list of "provider/model-id" strings, got ["gpt-4o"]'],
    [{ retry: { baseDelayMs: null } }, "src: retry.baseDelayMs: expected a non-negative integer (milliseconds), got null"],
    [{ retry: 3 }, "src: retry: expected an object, got 3"],
    [{ compaction: { thresholdPercent: 0 } }, "src: compaction.thresholdPercent: expected a percentage above 0 and at most 100, got 0"],
    [{ compaction: { thresholdPercent: 120 } }, "src: compaction.thresholdPercent: expected a percentage above 0 and at most 100, got 120"],
    [{ compaction: { thresholdTokens: -5 } }, "src: compaction.thresholdTokens: expected a positive integer, got -5"],
    [{ compaction: { backgroundPercent: 100 } }, "src: compaction.backgroundPercent: expected a percentage from 0 (off) to below 100, got 100"],
    [{ compaction: { model: "gpt-4o" } }, 'src: compaction.model: expected a "provider/model-id" string, got "gpt-4o"'],
    [{ compaction: { methods: [] } }, 'src: compaction.methods: expected a non-empty list of distinct methods from "native", "remote", "model", "extractive", got []'],
    [{ compaction: { methods: ["model", "model"] } }, 'src: compaction.methods: expected a non-empty list of distinct methods from "native", "remote", "model", "extractive", got ["model","model"]'],
    [{ compaction: { methods: ["llm"] } }, 'src: compaction.methods: expected a non-empty list of distinct methods from "native", "remote", "model", "extractive", got ["llm"]'],
    [{ pruning: { maxResultTokens: 1.5 } }, "src: pruning.maxResultTokens: expected a non-negative integer (0 turns it off), got 1.5"],
    [[1], "src: expected a JSON object, got [1]"],
  ];
  for (const [value, message] of bad) {
    test(`rejects ${JSON.stringify(value)}`, () => {
      assert.throws(() => parseSettings(value, "src"), { name: "SettingsError", message });
    });
  }

  test("accepts every documented key", () => {
    const input = {
      compaction: {
        enabled: false,
        reserveTokens: 1,
        keepRecentTokens: 2,
        autoContinue: false,
        remoteEndpoint: "https://example.test/summarize",
        models: ["anthropic/claude-haiku-4-5", "openrouter/qwen/qwen3"],
        thresholdPercent: 75,
        thresholdTokens: 120_000,
        backgroundPercent: 0,
        midTurn: false,
        pinFirstRequest: true,
        model: "openai/gpt-4o-mini",
        methods: ["model", "extractive"] as ("model" | "extractive")[],
      },
      branchSummary: { enabled: true, reserveTokens: 3 },
      retry: { enabled: false, maxRetries: 0, baseDelayMs: 0 },
      pruning: { maxResultTokens: 0, supersededReads: false },
    };
    assert.deepEqual(parseSettings(input, "src"), input);
    assert.deepEqual(resolveSettings(input), input);
  });
});

/** Issue 26, defect 11: a settings file a cloned repository ships must not hang, crash or eat memory. */
describe("hostile settings files", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "bonsai-hostile-settings-"));
    mkdirSync(join(root, ".bonsai"), { recursive: true });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const file = () => join(root, ".bonsai", "settings.json");
  const load = () => loadSettings({ home: join(root, "home"), cwd: root, onWarning: () => {} });

  test("a FIFO or a link to a device is refused at once, naming the file", () => {
    execFileSync("mkfifo", [file()]);
    assert.throws(load, /settings\.json: not a regular file/);
    rmSync(file());
    symlinkSync("/dev/zero", file());
    assert.throws(load, /settings\.json: not a regular file/);
  });

  test("keys named like Object's own (constructor, toString, __proto__) are unknown keys, not a crash", () => {
    const warnings: string[] = [];
    writeFileSync(file(), '{"compaction":{"constructor":1,"toString":2,"__proto__":{"x":1},"keepRecentTokens":5000}}');
    const settings = loadSettings({ home: join(root, "home"), cwd: root, onWarning: (m) => warnings.push(m) });
    assert.equal(settings.compaction.keepRecentTokens, 5000);
    assert.equal(warnings.filter((w) => /unknown setting "compaction\.(constructor|toString|__proto__)"/.test(w)).length, 3);
  });

  test("a very deep value fails with the key, not a stack overflow", () => {
    writeFileSync(file(), `{"compaction":{"model":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`);
    assert.throws(load, /compaction\.model: expected .*, got a deeply nested list/);
  });

  test("a huge file is refused before it is read", () => {
    writeFileSync(file(), `{"compaction":{"model":"${"x".repeat(2 << 20)}"}}`);
    assert.throws(load, /more than a settings file holds/);
  });
});
