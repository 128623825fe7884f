/** `bonsai completion SHELL`: prints a completion script for bash, zsh or fish (cli/completion.ts). */
import { type Command, InvalidArgumentError } from "commander";
import { completionScript, type Shell, SHELLS } from "../completion.js";
import { runAction } from "../output.js";

export function register(program: Command): void {
  program
    .command("completion")
    .description("print a shell completion script: `source <(bonsai completion bash)`, or see --help")
    .argument("<shell>", `one of ${SHELLS.join(", ")}`, (value: string) => {
      if (!(SHELLS as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${SHELLS.join(", ")}`);
      return value;
    })
    .addHelpText(
      "after",
      `
Install:
  bash  bonsai completion bash > ~/.local/share/bash-completion/completions/bonsai
  zsh   echo 'source <(bonsai completion zsh)' >> ~/.zshrc
  fish  bonsai completion fish > ~/.config/fish/completions/bonsai.fish`,
    )
    .action(
      runAction(async (shell: Shell) => {
        process.stdout.write(completionScript(program, shell));
      }),
    );
}
