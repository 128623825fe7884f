/**
 * Writes examples/coding-session.jsonl: a realistic coding session recorded through bonsai's own
 * SessionManager. An agent works on a small HTTP API over an afternoon: cursor pagination, a lint
 * fix, rate limiting (a first attempt abandoned and summarized on a branch), a side question the
 * user walks away from, ETags, a bug fix, a flaky CI run, a release, then performance, validation,
 * a filter, a health check, Docker and CI, request logs, and a body limit whose first prompt the user
 * rewrites. It uses read, write, edit
 * and bash tool calls, two models, thinking level changes, labels and a session name. After the
 * release the session is compacted once with the offline extractive summary (no model), so the
 * example shows a compaction boundary and still has plenty to compact.
 *
 *   node --import tsx examples/generate-example.ts [output.jsonl]
 *
 * Text, timings and usage come from a seeded generator and a scripted clock, so every run writes
 * the same conversation; only entry ids and the session id are random.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { compact } from "../src/compaction/compact.js";
import { prepareCompaction } from "../src/compaction/prepare.js";
import { DEFAULT_COMPACTION_SETTINGS } from "../src/compaction/settings.js";
import { SessionManager } from "../src/session/manager.js";
import { extractiveSummarizer } from "../src/summarizer/extractive.js";
import { INITIAL_FILES, PROJECT_ROOT } from "./generator/project.js";
import { OPUS, ScriptClock, SessionRecorder, SONNET, seededRandom } from "./generator/recorder.js";
import { lint, pagination } from "./generator/story-1.js";
import { ABANDONED_SUMMARY, fixedWindowAttempt, tokenBucket } from "./generator/story-2.js";
import { etagAndPatch, flakyCi, release, sideQuestion } from "./generator/story-3.js";
import { doneFilter, listPerformance, validation } from "./generator/story-4.js";
import { dockerAndCi, healthAndShutdown } from "./generator/story-5.js";
import { bodyLimit, bodyLimitFirstTry, requestLogging, standup } from "./generator/story-6.js";
import { Workspace } from "./generator/workspace.js";

const SESSION_START = Date.parse("2026-03-14T09:41:07.412Z");

/**
 * The store stamps entries with the wall clock. The example pretends to be an afternoon of work,
 * so while it records, `Date` reads the script's clock instead.
 */
function useScriptClock(clock: ScriptClock): () => void {
  const RealDate = Date;
  class ScriptDate extends RealDate {
    constructor(value?: number | string | Date) {
      if (value === undefined) super(clock.now);
      else super(value);
    }
    static override now(): number {
      return clock.now;
    }
  }
  globalThis.Date = ScriptDate as DateConstructor;
  return () => {
    globalThis.Date = RealDate;
  };
}

/** A compaction of the branch as `bonsai compact --extractive --keep-recent 8000` would make it (deterministic: no model). */
async function compactOffline(session: SessionManager): Promise<void> {
  const preparation = prepareCompaction(session.getBranch(), { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 8000 });
  if (!preparation) throw new Error("the example has nothing to compact after the release");
  const result = await compact(preparation, extractiveSummarizer(), { shortSummary: false });
  session.appendCompaction(result.summary, result.firstKeptEntryId, result.tokensBefore, { ...result.details, method: "extractive" });
}

/** Records the session into `outFile`; returns its entry count and the project as the session left it. */
export async function generateExample(outFile: string): Promise<{ entries: number; workspace: Workspace }> {
  const clock = new ScriptClock(SESSION_START);
  const restoreClock = useScriptClock(clock);
  const dir = mkdtempSync(join(tmpdir(), "bonsai-example-"));
  try {
    const session = SessionManager.create(PROJECT_ROOT, dir);
    const workspace = new Workspace(PROJECT_ROOT, INITIAL_FILES);
    const r = new SessionRecorder(session, workspace, clock, seededRandom(20260314));

    r.useModel(SONNET);
    r.thinkingLevel("medium");
    const page = pagination(r);
    session.appendLabelChange(page.labeled, "pagination");
    session.appendSessionInfo("tasktrack: pagination, rate limiting, 0.4.0");
    lint(r);

    // A harder design task: a stronger model, more thinking.
    r.useModel(OPUS);
    const beforeRateLimit = r.thinkingLevel("high");
    fixedWindowAttempt(r);
    // The user goes back to before the first attempt; what it taught is kept as a branch summary.
    clock.advance(45_000);
    session.branchWithSummary(beforeRateLimit, ABANDONED_SUMMARY, {
      readFiles: ["src/server.ts"],
      modifiedFiles: ["src/middleware/rate-limit.ts", "src/server.ts", "test/rate-limit.test.ts"],
    });
    const bucket = tokenBucket(r);
    session.appendLabelChange(bucket.labeled, "rate-limit");

    // A side question, then the user goes back to the rate-limit answer and moves on (no summary).
    sideQuestion(r);
    clock.advance(30_000);
    session.branch(bucket.labeled);
    r.useModel(SONNET);
    r.thinkingLevel("medium");
    etagAndPatch(r);
    flakyCi(r);
    const done = release(r);
    session.appendLabelChange(done.labeled, "release-0.4.0");
    await compactOffline(session);
    listPerformance(r);
    validation(r);
    doneFilter(r);
    healthAndShutdown(r);
    dockerAndCi(r);
    requestLogging(r);
    // The user rewrites a vague prompt: back to before it, and the precise one goes on a new branch.
    const beforePrompt = bodyLimitFirstTry(r);
    clock.advance(25_000);
    session.branch(beforePrompt);
    bodyLimit(r);
    standup(r);

    session.close();
    const written = session.getSessionFile()!;
    copyFileSync(written, outFile);
    return { entries: session.getEntries().length, workspace };
  } finally {
    restoreClock();
    rmSync(dir, { recursive: true, force: true });
  }
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename);
if (invokedDirectly) {
  const out = resolve(process.argv[2] ?? join(import.meta.dirname, "coding-session.jsonl"));
  const { entries } = await generateExample(out);
  process.stderr.write(`wrote ${entries} entries to ${out}\n`);
}
