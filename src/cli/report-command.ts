/**
 * The common shape of the read-and-report commands (`info`, `ls`, `migrate`): one location in,
 * one operation of ops/ or storage/, and its report printed as stable JSON with `--json` or as
 * text otherwise. Failures go through runAction (one line, JSON on stdout as well with --json).
 */
import type { Command } from "commander";
import { type Colors, colors, print, printJson, runAction, SESSION_ARGUMENT_HELP } from "./output.js";

const SESSION_ARGUMENT = ["<file>", SESSION_ARGUMENT_HELP] as const;

export interface ReportCommand<T> {
  name: string;
  description: string;
  /** the one argument: its name as commander writes it and its help; default a session location */
  argument?: readonly [string, string];
  /** help of --json: the shape it prints (default: "print stable JSON") */
  json?: string;
  run(argument: string): Promise<T>;
  format(report: T, argument: string, c: Colors): string;
}

export function registerReportCommand<T>(program: Command, spec: ReportCommand<T>): void {
  program
    .command(spec.name)
    .description(spec.description)
    .argument(...(spec.argument ?? SESSION_ARGUMENT))
    .option("--json", spec.json ?? "print stable JSON")
    .action(
      runAction(async (argument: string, options: { json?: boolean }) => {
        const report = await spec.run(argument);
        if (options.json) printJson(report);
        else print(spec.format(report, argument, colors()));
      }),
    );
}
