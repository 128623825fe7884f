/**
 * `bonsai view LOCATION [--port N] [--open]`: the session page served on 127.0.0.1, updated live
 * as the session grows (src/view/server.ts). Read-only; runs until Ctrl-C.
 */
import { spawn } from "node:child_process";
import { type Command, InvalidArgumentError } from "commander";
import { positiveInteger } from "../numeric-options.js";
import { print, runAction, warn, SESSION_ARGUMENT_HELP } from "../output.js";

interface ViewCommandOptions {
  port: number;
  open?: boolean;
  contextWindow?: number;
  reserve?: number;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("must be a port from 0 to 65535");
  return n;
}

/** Opens `url` in the desktop's browser; a failure is one warning, the server goes on. */
export function openBrowser(url: string): void {
  const command = process.platform === "darwin" ? "open" : process.platform === "win32" ? "cmd" : "xdg-open";
  const args = process.platform === "win32" ? ["/c", "start", "", url] : [url];
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.on("error", (error) => warn(`could not open a browser (${command}: ${error.message}); open ${url} yourself`));
    child.on("exit", (code) => {
      if (code !== null && code !== 0) warn(`could not open a browser (${command} exited with ${code}); open ${url} yourself`);
    });
    child.unref();
  } catch (error) {
    warn(`could not open a browser (${(error as Error).message}); open ${url} yourself`);
  }
}

export function register(program: Command): void {
  program
    .command("view")
    .description("serve the session page on 127.0.0.1 and update it live as the session grows (read-only)")
    .argument("<location>", SESSION_ARGUMENT_HELP)
    .option("--port <n>", "port to listen on (0 picks a free one)", port, 0)
    .option("--open", "open the page in the browser")
    .option("--context-window <tokens>", "the model's context window, for the timeline's threshold (default: from the model registry)", positiveInteger)
    .option("--reserve <tokens>", "tokens reserved for replies: the threshold is window - reserve (default 16384)", positiveInteger)
    .action(
      runAction(async (location: string, options: ViewCommandOptions) => {
        const { startViewServer } = await import("../../view/server.js");
        const server = await startViewServer(location, {
          port: options.port,
          contextWindow: options.contextWindow,
          reserveTokens: options.reserve,
          onWarning: warn,
        });
        print(`bonsai view: ${server.url} (read-only; Ctrl-C stops it)`);
        if (options.open) openBrowser(server.url);
        await new Promise<void>((done) => {
          const stop = () => {
            process.off("SIGINT", stop);
            process.off("SIGTERM", stop);
            void server.close().then(done);
          };
          process.on("SIGINT", stop);
          process.on("SIGTERM", stop);
        });
      }),
    );
}
