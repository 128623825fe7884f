#!/usr/bin/env node
/** The `bonsai` command: runs the program (program.ts) on the command line, errors as one line. */
import { CommanderError } from "commander";
import { reportError, USAGE_ERROR } from "./output.js";
import { buildProgram } from "./program.js";

/** `bonsai -V` as well as `-v`: commander takes one short flag per option, and both are common. */
function withVersionAlias(argv: readonly string[]): string[] {
  return argv.length === 3 && argv[2] === "-V" ? [argv[0], argv[1], "-v"] : [...argv];
}

async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(withVersionAlias(argv));
  } catch (error) {
    if (error instanceof CommanderError) {
      // help and version exit 0; everything else commander rejects is a usage error
      process.exitCode = error.exitCode === 0 ? 0 : USAGE_ERROR;
      return;
    }
    reportError(error);
    process.exitCode = 1;
  }
}

// A closed pipe (`bonsai tree big.jsonl | head`) is not an error worth a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

await main(process.argv);
