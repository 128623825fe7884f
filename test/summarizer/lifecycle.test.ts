/**
 * Issue 25, item 1: state with a lifecycle. On sessions written for these tests, where the user
 * corrects a requirement, the assistant reverses a decision, and errors are fixed (verified by
 * another command of the same kind, by a re-run that printed nothing) or only claimed fixed, the
 * extractive summary, the coverage check on a correct model summary and the update of an older
 * summary state none of the retired items as current.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentMessage } from "../../src/format/message-types.js";
import { convertToLlm } from "../../src/messages/convert.js";
import { serializeConversation } from "../../src/messages/serialize.js";
import { extractiveSummary } from "../../src/summarizer/extractive.js";
import { checkKind, checkRunKind, currentItems, currentItemsAfter, type Placed, retiredValues, retirementsOf, statesValue } from "../../src/summarizer/lifecycle.js";
import { constraintSentences, placedConstraints } from "../../src/summarizer/extractive-facts.js";
import { guardSummary, splitGuardSections } from "../../src/summarizer/summary-guard.js";
import { a, messageOf, tr, u } from "../helpers/paths.js";

const transcript = (...messages: AgentMessage[]) => serializeConversation(convertToLlm(messages));
const summarize = (conversation: string, previous?: string) =>
  extractiveSummary(
    `<conversation>\n${conversation}\n</conversation>\n\n${previous ? `<previous-summary>\n${previous}\n</previous-summary>\n\n` : ""}Summarize.`,
    "history",
  );
const user = (text: string) => messageOf(u(text));
const say = (text: string, calls?: { name: string; args?: Record<string, unknown> }[]) => messageOf(a(text, calls ? { calls } : {}));
const bash = (command: string) => say("", [{ name: "bash", args: { command } }]);
const result = (text: string, isError = false, tool = "bash") => messageOf(tr(text, tool, { isError }));
const edit = (path: string) => say("", [{ name: "edit", args: { path, oldText: "a", newText: "b" } }]);

function section(summary: string, heading: string): string[] {
  const lines = summary.split("\n");
  const start = lines.indexOf(heading);
  if (start < 0) return [];
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^#{2,3} /.test(line)) break;
    if (line.trim() && line.trim() !== "(none)") out.push(line);
  }
  return out;
}
/** Lines of the summary that state `value` as wanted (a line saying "not VALUE" does not). */
const stating = (lines: readonly string[], value: string) => lines.filter((line) => statesValue(line, value));

describe("the rules", () => {
  it("finds what a correction turns down, and not ordinary negations", () => {
    assert.deepEqual(retiredValues("No, not 8080, use 8443."), ["8080"]);
    assert.deepEqual(retiredValues("Use spaces, not tabs."), ["tabs"]);
    assert.deepEqual(retiredValues("Switching to SQLite instead of Redis."), ["redis"]);
    assert.deepEqual(retiredValues("no more `lodash`"), ["lodash"]);
    assert.deepEqual(retiredValues("Bitte nicht mehr Redis verwenden."), ["redis"]);
    assert.deepEqual(retiredValues("non usare var, usa const"), ["var"]);
    for (const plain of ["It's not working.", "The build is not ready yet.", "There are no tests.", "This is not a bug in the parser"]) {
      assert.deepEqual(retiredValues(plain), [], plain);
    }
  });

  it("finds a correction in any case, and with the letters only Unicode case folding maps to ASCII", () => {
    // the quick scan that passes over sentences without a correction must let every one of these through
    assert.deepEqual(retiredValues("STOP USING lodash, use the std lib."), ["lodash"]);
    assert.deepEqual(retiredValues("Use tabs, NOT spaces."), ["spaces"]);
    assert.deepEqual(retiredValues("\u017ftop u\u017fing lodash"), ["lodash"], "long s folds to s");
    assert.deepEqual(retiredValues("\u212aeine Zeile mehr lodash"), ["lodash"], "the Kelvin sign folds to k");
    assert.deepEqual(retiredValues("Plutôt que Redis, prends SQLite."), ["redis"]);
  });

  it("finds a rule or a correction at the start of a word whatever comes before it, and not inside a word", () => {
    // the scans match the character before a word instead of looking behind: the same words must pass
    for (const before of ["", " ", "_", "(", '"', "«", "🙂", "\n", "1."]) {
      assert.deepEqual(retiredValues(`${before}not 8080, use 8443.`), ["8080"], JSON.stringify(before));
      assert.deepEqual(retiredValues(`Use SQLite ${before}instead of Redis.`), ["redis"], JSON.stringify(before));
      assert.deepEqual(retiredValues(`${before}anstatt Redis nehmen wir SQLite.`), ["redis"], JSON.stringify(before));
      assert.equal(constraintSentences([`Deploy it ${before}without downtime.`]).length, 1, JSON.stringify(before));
      assert.equal(constraintSentences([`${before}Never commit to main.`]).length, 1, JSON.stringify(before));
    }
    // a quote taken out of a sentence can join the words of a correction the text itself does not hold
    assert.equal(placedConstraints({ said: [{ role: "user", text: 'Use SQLite instead"x"of Redis.', at: 0 }] }).length, 1);
    for (const before of ["é", "x", "7", "𝒜"]) {
      assert.deepEqual(retiredValues(`${before}not 8080, use 8443.`), [], JSON.stringify(before));
      assert.equal(constraintSentences([`Deploy it ${before}without downtime.`]).length, 0, JSON.stringify(before));
    }
  });

  it("reads a rule whose word touches a quote as the whole sentence does", () => {
    assert.deepEqual(constraintSentences(['Only"pnpm" for installs here.', "Just“pnpm” for every install here."]), ['Only"pnpm" for installs here.', "Just“pnpm” for every install here."]);
  });

  it("tells checks of one kind apart from others", () => {
    assert.deepEqual(["npx vitest run", "npm test", "npm run test:unit", "node --test a.test.ts"].map(checkKind), ["test", "test", "test", "test"]);
    assert.deepEqual(["tsc --noEmit", "npm run typecheck", "npx eslint .", "npm run lint", "npm run build"].map(checkKind), ["typecheck", "typecheck", "lint", "lint", "build"]);
    assert.equal(checkKind("ls -la"), undefined);
  });

  it("retires an item only by a later text that turns its value down", () => {
    const items = [{ text: "Serve it on port 8080.", at: 1 }];
    assert.deepEqual(currentItems(items, [{ text: "not 8080, use 8443", at: 2 }]), []);
    assert.deepEqual(currentItems(items, [{ text: "not 8080, use 8443", at: 0 }]), items, "an earlier text does not");
    assert.deepEqual(currentItems([{ text: "Use 8443, not 8080.", at: 1 }], [{ text: "not 8080", at: 2 }]).length, 1, "a sentence that itself turns it down stays");
  });

  it("retires in a long span exactly what testing every retirement on every item retires", () => {
    // values in every shape the index and the plain search must agree with the patterns on:
    // case, ſ and the Kelvin sign (which fold to ASCII), accents, punctuation, spaces in code spans
    const values = ["8080", "8443", "lodash", "Redis", "REDIS", "src/a.ts", "v1.2", "foo-bar", "città", "\u017Fwift", "swift", "\u212Aafka", "kafka", "`use strict`", '"old api"', "x9", "tabs"];
    const shapes = ["{v}", "{v}.", "({v})", "pre{v}", "{v}2", "{v}_x", "the {v} one", "{V}", "{v}/lib"];
    const corrections = ["not {v}, use 8443", "{w} instead of {v}", "no more {v}", "stop using {v}", "rather than {v}, keep {w}", "nicht {v}, sondern {w}"];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pick = <T>(list: readonly T[]) => list[random(list.length)];
    const fill = (template: string) =>
      template.replace(/\{([vVw])\}/g, (_, key: string) => {
        const value = pick(values);
        return key === "V" ? value.toUpperCase() : value;
      });
    const naive = (items: readonly Placed[], later: readonly Placed[]) => {
      const retirements = retirementsOf(later);
      return items.filter((item) => !retirements.some((r) => r.at > item.at && statesValue(item.text, r.value)));
    };
    let retired = 0;
    for (let round = 0; round < 300; round++) {
      const items = Array.from({ length: 1 + random(25) }, (_, i) => ({ text: `Keep ${fill(pick(shapes))} and ${fill(pick(shapes))}${random(4) === 0 ? `, not ${fill("{v}")}` : ""}.`, at: i * 2 }));
      const later = Array.from({ length: random(25) }, () => ({ text: fill(pick(corrections)), at: random(60) }));
      const expected = naive(items, later);
      assert.deepEqual(currentItemsAfter(items, retirementsOf(later)), expected, JSON.stringify({ items, later }));
      retired += items.length - expected.length;
    }
    assert.ok(retired > 500, `the cases retire items (${retired})`);
  });
});

const SESSION = transcript(
  user("Build the status endpoint. Serve it on port 8080. Use tabs for indentation."),
  say("I'll use Redis rather than an in-memory map because the counts must survive restarts.", [{ name: "read", args: { path: "src/server.ts" } }]),
  result("export const app = createApp();", false, "read"),
  edit("src/status.ts"),
  result("Successfully replaced text in src/status.ts."),
  bash("npx vitest run"),
  result("FAIL test/status.test.ts > reports uptime\nAssertionError: expected 0 to be greater than 0", true),
  user("No, not 8080, use 8443: 8080 is taken on the staging hosts."),
  say("Switching to SQLite instead of Redis: the hosts have no Redis and a file survives restarts too."),
  edit("src/status.ts"),
  result("Successfully replaced text in src/status.ts."),
  bash("npm test"),
  result("# pass 14\n# fail 0"),
  bash("npm run typecheck"),
  result("src/status.ts(3,1): error TS2304: Cannot find name 'db'.", true),
  edit("src/status.ts"),
  result("Successfully replaced text in src/status.ts."),
  bash("npm run typecheck"),
  result("", false),
  bash("npm run lint"),
  result("src/status.ts:9:1 lint/style/noVar: use let or const", true),
  edit("src/status.ts"),
  result("Successfully replaced text in src/status.ts."),
  say("Fixed the lint warning."),
  say("", [{ name: "deploy", args: { target: "staging" } }]),
  result("Deployment rejected by policy: the change window is closed until 18:00.", true, "deploy"),
);

describe("the extractive summary of a session with corrections, reversals and fixes", () => {
  const summary = summarize(SESSION);

  it("states the corrected port, never the old one, as a requirement or goal", () => {
    const current = [...section(summary, "## Goal"), ...section(summary, "## Constraints & Preferences")];
    assert.deepEqual(stating(current, "8080"), [], current.join("\n"));
    assert.ok(current.some((line) => line.includes("8443")), current.join("\n"));
    assert.ok(current.some((line) => /tabs for indentation/.test(line)), "an uncorrected constraint stays");
  });

  it("keeps the decision that stands and drops the reversed one", () => {
    const decisions = section(summary, "## Key Decisions");
    assert.deepEqual(stating(decisions, "redis"), [], decisions.join("\n"));
    assert.ok(decisions.some((line) => /SQLite/.test(line)), decisions.join("\n"));
  });

  it("lists as Blocked only what is still broken, and tells a fix not re-run from a verified one", () => {
    const blocked = section(summary, "### Blocked");
    assert.equal(blocked.length, 2, blocked.join("\n"));
    // vitest failed, npm test passed after: verified by another command of the same kind
    assert.doesNotMatch(blocked.join("\n"), /vitest|reports uptime/);
    // the typecheck re-run printed nothing and passed
    assert.doesNotMatch(blocked.join("\n"), /TS2304/);
    // the lint problem was edited and claimed fixed, but lint never ran again
    assert.match(blocked.join("\n"), /npm run lint`: .*noVar.*\(changed since; not re-run\)/);
    // a tool's own error flag makes an unfamiliar text an error
    assert.match(blocked.join("\n"), /deploy: Deployment rejected by policy/);
  });

  it("an update drops what the new span corrected, reversed or fixed from the older summary", () => {
    const older = summarize(
      transcript(
        user("Build the status endpoint. Serve it on port 8080."),
        say("I'll use Redis rather than an in-memory map because the counts must survive restarts."),
        bash("npm test"),
        result("FAIL test/status.test.ts > reports uptime", true),
      ),
    );
    assert.match(older, /8080/);
    assert.match(section(older, "### Blocked").join("\n"), /npm test/);
    const updated = summarize(
      transcript(
        user("Not 8080 after all, use 8443."),
        say("Switching to SQLite instead of Redis."),
        bash("npx vitest run"),
        result("Test Files  3 passed (3)"),
      ),
      older,
    );
    const current = [...section(updated, "## Goal"), ...section(updated, "## Constraints & Preferences"), ...section(updated, "## Key Decisions")];
    assert.deepEqual(stating(current, "8080"), [], current.join("\n"));
    assert.deepEqual(stating(current, "redis"), [], current.join("\n"));
    assert.deepEqual(section(updated, "### Blocked"), []);
  });
});

describe("values in capitals and commands that run no check", () => {
  it("a value in capitals after 'instead of' is retired, though it is spelled like an article", () => {
    assert.deepEqual(retiredValues("Use AES instead of DES."), ["des"]);
    assert.deepEqual(retiredValues("Filter with EXISTS instead of IN."), ["in"]);
    assert.deepEqual(retiredValues("Ho scelto una tabella invece di uno switch."), []);
  });

  it("a check's kind counts only when a program that runs checks runs it", () => {
    assert.equal(checkRunKind("cd api && npx vitest run"), "test");
    assert.equal(checkRunKind('git commit -m "add tests"'), undefined);
    assert.equal(checkRunKind("cp fixtures/a.json test/data/"), undefined);
  });
});

describe("the coverage check on a correct summary", () => {
  const CORRECT = [
    "## Goal",
    "Status endpoint on port 8443 (8080 is taken on staging); tabs for indentation.",
    "## Progress",
    "- Tests and the typecheck pass. The lint problem noVar in src/status.ts was edited but lint has not run again.",
    "- The deploy was rejected by policy until 18:00.",
    "## Key Decisions",
    "- SQLite for the counts: the hosts have no Redis.",
  ].join("\n");
  const estimate = (text: string) => Math.ceil(text.length / 4);

  it("adds no retired requirement, reversed decision or fixed error", () => {
    const guarded = guardSummary({ summary: CORRECT, conversation: SESSION, modifiedFiles: ["src/status.ts"] }, { verbatimRequests: false }, estimate);
    const added = guarded.coverage?.added ?? [];
    const wrong = added.filter(
      (item) =>
        (item.kind !== "error" && (statesValue(item.text, "8080") || statesValue(item.text, "redis"))) ||
        (item.kind === "error" && /vitest|TS2304/.test(item.text)),
    );
    assert.deepEqual(wrong, []);
  });

  it("stops carrying a constraint an earlier check appended once the user corrects it", () => {
    const first = guardSummary(
      { summary: "## Goal\nA status endpoint.", conversation: transcript(user("Serve it on port 8080, always."), user("Now add the uptime field.")), modifiedFiles: [] },
      { verbatimRequests: false },
      estimate,
    );
    const carried = splitGuardSections(first.text).carried;
    assert.ok(carried.some((item) => item.text.includes("8080")), "the first check appended it");
    const next = guardSummary(
      { summary: "## Goal\nA status endpoint on 8443.", conversation: transcript(user("No, not 8080, use 8443.")), modifiedFiles: [], previous: { requests: [], carried } },
      { verbatimRequests: false },
      estimate,
    );
    assert.deepEqual(
      (next.coverage?.added ?? []).filter((item) => statesValue(item.text, "8080")),
      [],
    );
  });
});

describe("near-duplicate requests", () => {
  it("fold into the newest, naming the numbers of the earlier ones, only when three or more say the same", async () => {
    const { foldSimilar } = await import("../../src/summarizer/user-requests.js");
    const repeated = Array.from({ length: 39 }, (_, i) => `Also check module number ${39 - i}.`); // newest first
    const { requests, similar } = foldSimilar(["Ship it.", ...repeated, "Rename `oldName1` to `newName1`.", "Rename `oldName0` to `newName0`."]);
    assert.deepEqual(requests, ["Ship it.", "Also check module number 39.", "Rename `oldName1` to `newName1`.", "Rename `oldName0` to `newName0`."]);
    assert.deepEqual(similar.get("Also check module number 39."), { count: 38, numbers: Array.from({ length: 38 }, (_, i) => String(38 - i)) });
    assert.deepEqual(foldSimilar(["Fix issue #12.", "Fix issue #7."]).requests, ["Fix issue #12.", "Fix issue #7."], "two are two tasks");
  });

  it("take a fraction of the requests section", () => {
    const estimate = (text: string) => Math.ceil(text.length / 4);
    const parts = transcript(...Array.from({ length: 39 }, (_, i) => user(`Also check module number ${i + 1} for the deprecated API.`)));
    const guarded = guardSummary({ summary: "## Goal\nCheck every module.", conversation: parts, modifiedFiles: [] }, { coverageCheck: false }, estimate);
    assert.equal(guarded.text.match(/^> Also check module number/gm)?.length, 1);
    assert.match(guarded.text, /and 38 earlier requests like it, for 38, 37, .*, 1\)/);
  });
});

describe("constraints as users state them", () => {
  it("'Important: …' and German 'keine …' are rules", async () => {
    const { constraintSentences } = await import("../../src/summarizer/extractive-facts.js");
    assert.deepEqual(constraintSentences(["Important: use tabs for indentation in every file."]), ["Important: use tabs for indentation in every file."]);
    assert.deepEqual(constraintSentences(["Bitte keine globalen Variablen verwenden."]), ["Bitte keine globalen Variablen verwenden."]);
    assert.deepEqual(constraintSentences(["It is important to me that you explain it well enough."]), [], "'important' only as a label");
  });
});

describe("every agent's edits and shells", () => {
  const PATCH = "*** Begin Patch\n*** Update File: src/app.ts\n@@\n-a\n+b\n*** Add File: src/new.ts\n+x\n*** Delete File: src/old.ts\n*** End Patch";

  it("apply_patch and a Codex-style shell with an argument array are tracked like edits and commands", () => {
    const summary = summarize(
      transcript(
        user("Port the server to the new router and keep the tests green."),
        say("", [{ name: "apply_patch", args: { input: PATCH } }]),
        result("Success. Updated the following files:\nM src/app.ts\nA src/new.ts\nD src/old.ts", false, "apply_patch"),
        say("", [{ name: "shell", args: { command: ["bash", "-lc", "npm test"] } }]),
        result("FAIL test/app.test.ts > routes\nAssertionError: expected 404 to be 200", true, "shell"),
        say("", [{ name: "shell", args: { command: ["apply_patch", PATCH.replace("src/new.ts", "src/router.ts")] } }]),
        result("Success.", false, "shell"),
        say("I decided to mount the router before the static files because the catch-all swallowed the API routes."),
      ),
    );
    const done = section(summary, "### Done").join("\n");
    for (const path of ["src/app.ts", "src/new.ts", "src/old.ts", "src/router.ts"]) assert.match(done, new RegExp(path.replace(".", "\\.")), `${path} in Done`);
    assert.match(section(summary, "### Blocked").join("\n"), /`npm test`: FAIL test\/app\.test\.ts > routes \(changed since; not re-run\)/);
    assert.match(section(summary, "## Key Decisions").join("\n"), /mount the router before the static files/);
  });

  it("the compaction's file lists hold a patch's files too", async () => {
    const { createFileOps, extractFileOpsFromMessage } = await import("../../src/compaction/file-ops.js");
    const ops = createFileOps();
    extractFileOpsFromMessage(a("", { calls: [{ name: "apply_patch", args: { input: PATCH } }] }).message as AgentMessage, ops);
    assert.deepEqual([[...ops.written], [...ops.edited].sort()], [["src/new.ts"], ["src/app.ts", "src/old.ts"]]);
  });
});
