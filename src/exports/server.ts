/**
 * `bonsai-sessions/server`: the summarization endpoint of `bonsai serve`, to run inside another
 * program. It loads fastify, so it is imported only when started.
 */
import type { RunningServer, StartOptions } from "../server/app.js";

export type { ServerOptions, StartOptions, RunningServer } from "../server/app.js";

export async function startSummarizationServer(options: StartOptions): Promise<RunningServer> {
  return (await import("../server/app.js")).startServer(options);
}
