/**
 * The user's words versus what only travels in a user message (summarizer/user-text.ts): injected
 * prompts, pasted logs, and what counts as the same check of a shell command.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkOf, checksOf, isInjectedPrompt, isLogLine, proseOf } from "../../src/summarizer/user-text.js";

describe("isInjectedPrompt", () => {
  it("recognizes system-like prompts and injected blocks", () => {
    assert.ok(isInjectedPrompt("You are Forge, a coding agent.\nTier: heavy\nTools: read, bash\nAnswer briefly."));
    assert.ok(isInjectedPrompt("You are the reviewer sub-agent. Tier: light"));
    assert.ok(isInjectedPrompt("<system-reminder>\nThe user opened src/a.ts\n</system-reminder>"));
    assert.ok(isInjectedPrompt("# AGENTS.md\n\nRun npm test before committing."));
    assert.ok(isInjectedPrompt("SYSTEM: you may only use the read tool"));
  });

  it("leaves the user's own messages alone, even when they start with 'You are'", () => {
    assert.ok(!isInjectedPrompt("You are wrong, the test still fails on Node 20."));
    assert.ok(!isInjectedPrompt("Fix the flaky test in test/queue.test.ts, please."));
    assert.ok(!isInjectedPrompt("Please never touch the <system> folder."));
  });
});

describe("isLogLine and proseOf", () => {
  it("tells pasted output from prose", () => {
    for (const line of [
      "src/a.ts(12,5): error TS2345: Argument of type 'string' is not assignable",
      "    at Object.<anonymous> (/app/src/index.js:10:15)",
      "2026-03-01T10:22:01Z ERROR connection refused",
      "npm ERR! code ELIFECYCLE",
      "Traceback (most recent call last):",
      "$ npm run build",
    ]) {
      assert.ok(isLogLine(line), line);
    }
    for (const line of ["Never log the API key.", "Make sure the old endpoint keeps working.", "Use integer cents for amounts."]) {
      assert.ok(!isLogLine(line), line);
    }
  });

  it("keeps the prose of a message with a pasted log, without the log or its code fence", () => {
    const text = "CI is red:\n```\nerror TS2322: Type 'x' is not assignable\n```\nnpm ERR! code 2\nDon't disable the check, fix the type.";
    assert.equal(proseOf(text), "CI is red:\nDon't disable the check, fix the type.");
  });
});

describe("checkOf and checksOf", () => {
  it("a check is a program and its subcommand (npm run's script, python -m's module)", () => {
    assert.equal(checkOf("npm run typecheck"), "npm run typecheck");
    assert.equal(checkOf("npm test -- --watch=false"), "npm test");
    assert.equal(checkOf("CI=1 npx tsc --noEmit -p ."), "npx tsc");
    assert.equal(checkOf("cargo test -p parser"), "cargo test");
    assert.equal(checkOf("python3 -m pytest tests/test_api.py"), "python3 -m pytest");
    assert.equal(checkOf("./node_modules/.bin/eslint src"), "eslint");
    assert.equal(checkOf("cd packages/api"), undefined);
  });

  it("lists the checks of a chained command line, the first one first", () => {
    assert.deepEqual(checksOf("cd api && npm run typecheck && npm run lint"), ["npm run typecheck", "npm run lint"]);
    assert.deepEqual(checksOf("npm test 2>&1 | tail -20"), ["npm test", "tail"]);
    assert.notEqual(checkOf("npm run typecheck"), checkOf("npm run lint"));
  });
});
