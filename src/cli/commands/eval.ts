/**
 * `bonsai eval SESSION… [--summarizer SPEC]… [--rounds N] [--at ID] [--judge SPEC [--judge-samples N]] [--json]`:
 * compacts each session's branch in chained rounds with every summarizer on the same spans and
 * scores the summaries (fact retention, judge probes, compression, growth, time, cost). Nothing
 * is written. The work is evaluateSummaries' (ops/eval.ts); this parses the flags and prints.
 */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { type FactsFile, parseFactsFile } from "../../ops/eval-truth.js";
import { evaluateSummaries, type EvalSummarizer } from "../../ops/eval.js";
import { parseSummarizerSpec, selectSummarizer } from "../../summarizer/select.js";
import { SummarizerConfigError } from "../../summarizer/types.js";
import { formatEvalTable, progressBar } from "../eval-table.js";
import { gitCommit, packageVersion } from "../build-info.js";
import { nonNegativeInteger, positiveCount, positiveInteger, temperature } from "../numeric-options.js";
import { CliError, colors, print, printJson, runAction, runInterruptible, warn } from "../output.js";

interface CommandOptions {
  summarizer: string[];
  facts?: string;
  rounds: number;
  at?: string;
  judge?: string;
  judgeSamples?: number;
  judgeTemperature?: number;
  keepRecent?: number;
  verbatim?: boolean;
  coverage?: boolean;
  redact?: boolean;
  json?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** The facts file of --facts, read and checked; a bad one is one line naming the file and field. */
function readFacts(path: string): FactsFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new CliError(`--facts: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  try {
    return parseFactsFile(text, path);
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
}

/** The summarizers to compare, each made only when its first round starts. */
export function evalSummarizers(specs: readonly string[], redact: boolean): EvalSummarizer[] {
  const labels = specs.length > 0 ? [...new Set(specs)] : ["extractive"];
  return labels.map((label) => {
    let choice: ReturnType<typeof parseSummarizerSpec>;
    try {
      choice = parseSummarizerSpec(label);
    } catch (error) {
      throw new CliError(error instanceof Error ? error.message : String(error));
    }
    return { label, summarizer: () => selectSummarizer({ ...choice, redact, onNotice: warn }) };
  });
}

export function register(program: Command): void {
  program
    .command("eval")
    .description("score summarizers on sessions: chained compactions on the same spans, fact retention, growth, time and cost (nothing is written)")
    .argument("<sessions...>", "session files (.jsonl), sqlite:PATH#ID or postgres://…#ID")
    .option("--summarizer <spec>", "extractive, model:provider/id, base-url:URL[#model-id] or remote:URL (repeat to compare; default extractive)", collect, [])
    .option("--rounds <n>", "chained compactions per session, with new work between them", positiveInteger, 3)
    .option("--at <id>", "the first compaction with the leaf at this entry (default: where an agent would compact)")
    .option("--judge <spec>", "a model that answers probe questions from each summary and grades them 0-5: provider/id, or base-url:URL[#model-id] for any OpenAI-compatible server")
    .option("--judge-samples <n>", "how many times the judge answers and grades each summary; the report gives the mean and the spread", positiveCount)
    .option("--judge-temperature <t>", "the judge's sampling temperature (0 to 2; default: the provider's)", temperature)
    .option("--facts <file>", "score these facts instead of the ones extracted from the span, and count what must not be stated as current (docs/summarizers.md)")
    .option("--keep-recent <tokens>", "estimated tokens kept verbatim (default: 10% of the branch)", nonNegativeInteger)
    .option("--no-verbatim", "leave out the verbatim user-requests section")
    .option("--no-coverage", "skip the coverage check")
    .option("--no-redact", "send prompts without masking API keys, tokens and private keys")
    .option("--json", "print stable JSON")
    .action(
      runAction(async (sessions: string[], options: CommandOptions) => {
        const redact = options.redact !== false;
        const summarizers = evalSummarizers(options.summarizer, redact);
        const judgeSpec = options.judge;
        const judge = judgeSpec
          ? async () => {
              try {
                const choice = judgeSpec.includes(":") ? parseSummarizerSpec(judgeSpec) : { model: judgeSpec };
                return await selectSummarizer({ ...choice, redact, onNotice: warn });
              } catch (error) {
                if (error instanceof SummarizerConfigError) throw new CliError(`--judge: ${error.message}`);
                throw error;
              }
            }
          : undefined;
        await runInterruptible(async (signal) => {
          const bar = progressBar();
          try {
            const known = options.facts ? readFacts(options.facts) : undefined;
            const commit = gitCommit();
            const targets = known ? sessions.map((target) => ({ target, facts: known.facts, mustNotState: known.mustNotState })) : sessions;
            const report = await evaluateSummaries(targets, summarizers, {
              rounds: options.rounds,
              ...(options.at !== undefined ? { at: options.at } : {}),
              ...(options.keepRecent !== undefined ? { keepRecentTokens: options.keepRecent } : {}),
              guard: { verbatimRequests: options.verbatim !== false, coverageCheck: options.coverage !== false },
              ...(judge ? { judge } : {}),
              ...(options.judgeSamples !== undefined ? { judgeSamples: options.judgeSamples } : {}),
              ...(options.judgeTemperature !== undefined ? { judgeTemperature: options.judgeTemperature } : {}),
              build: { version: packageVersion(), ...(commit ? { commit } : {}) },
              signal,
              onWarning: warn,
              onProgress: ({ done, total, session, summarizer }) => bar.update(done, total, `${summarizer} on ${session}`),
            });
            bar.done();
            if (options.json) printJson(report);
            else print(formatEvalTable(report, colors()));
            // A summarizer that failed is in the report; the exit code says so too.
            if (report.sessions.some((session) => session.results.some((result) => result.error))) process.exitCode = 1;
          } finally {
            bar.done();
          }
        });
      }),
    );
}
