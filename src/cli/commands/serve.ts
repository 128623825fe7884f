/** `bonsai serve`: run the summarization endpoint (see src/server/app.ts). */
import { type Command, InvalidArgumentError } from "commander";
import { addSummarizerOptions, type SummarizerOptionValues, summarizerFromOptions } from "../summarizer-options.js";
import { CliError, runAction, UsageError, warn } from "../output.js";

interface ServeOptions extends SummarizerOptionValues {
  port: number;
  host: string;
  extractive?: boolean;
  threads?: number;
  tokenFile?: string;
  maxConcurrent: number;
  timeout: number;
  maxBody: string;
}

function integerIn(min: number, max: number) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return n;
  };
}

export function register(program: Command): void {
  const command = program
    .command("serve")
    .description("serve summaries over HTTP: POST {systemPrompt, prompt, maxTokens?} to /summarize")
    .option("--port <n>", "port to listen on (0 picks a free one)", integerIn(0, 65535), 8787)
    .option("--host <host>", "address to listen on; anything but loopback requires a token", "127.0.0.1")
    .option("--extractive", "summarize offline without a model, on worker threads")
    .option("--threads <n>", "with --extractive: threads that summarize at once (default: one fewer than the cores, at least 1; 0: on the thread that answers requests)", integerIn(0, 256))
    .option("--token-file <path>", "file whose first line is the bearer token (default: env BONSAI_SERVER_TOKEN)")
    .option("--max-concurrent <n>", "summarizations at once; more get 429 with Retry-After", integerIn(1, 1024), 4)
    .option("--timeout <seconds>", "longest summarization; the model call is stopped after it (504)", integerIn(1, 3600), 120)
    .option("--max-body <size>", "largest request body (413 beyond), e.g. 8mb", "8mb");
  addSummarizerOptions(command).action(
    runAction(async (options: ServeOptions) => {
      // The server modules load fastify; only this command pays for them.
      const [{ startServer }, { loadServerToken }, { parseByteSize }] = await Promise.all([
        import("../../server/app.js"),
        import("../../server/auth.js"),
        import("../../server/limits.js"),
      ]);
      let maxBodyBytes: number;
      let token: string | undefined;
      try {
        maxBodyBytes = parseByteSize(options.maxBody);
      } catch (error) {
        throw new UsageError(`serve: --max-body: ${(error as Error).message}`);
      }
      try {
        token = loadServerToken({ tokenFile: options.tokenFile });
      } catch (error) {
        throw new CliError((error as Error).message);
      }
      if (options.extractive) {
        const ignored = (["model", "baseUrl", "modelId", "api", "apiKey", "remote"] as const).filter((key) => options[key] !== undefined);
        const flag = (key: string) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
        if (ignored.length > 0) warn(`--extractive summarizes without a model: ${ignored.map(flag).join(", ")} ${ignored.length === 1 ? "has" : "have"} no effect`);
      } else if (options.threads !== undefined) warn("--threads has no effect without --extractive");
      const summarizer = !options.extractive
        ? await summarizerFromOptions(options)
        : options.threads === 0
          ? (await import("../../summarizer/extractive.js")).extractiveSummarizer()
          : (await import("../../summarizer/extractive-threads.js")).threadedExtractiveSummarizer(options.threads, { onWarning: warn });
      try {
        await startServer({
          summarizer,
          token,
          host: options.host,
          port: options.port,
          maxConcurrent: options.maxConcurrent,
          requestTimeoutMs: options.timeout * 1000,
          maxBodyBytes,
          handleSignals: true,
        });
      } catch (error) {
        throw new CliError((error as Error).message);
      }
    }),
  );
}
