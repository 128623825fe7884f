/**
 * Shell completion for `bonsai`, written from the program's own commands and options, so it can
 * never name a command or flag that does not exist: `bonsai completion bash|zsh|fish` prints the
 * script to source. Words that are not flags complete as file names (sessions, stores). Pure.
 */
import type { Command } from "commander";

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

interface CommandWords {
  name: string;
  description: string;
  flags: { long: string; short?: string; description: string }[];
}

/** Each command's name, one-line description and flags (with --help), in the order registered. */
export function commandWords(program: Command): CommandWords[] {
  return program.commands.map((command) => ({
    name: command.name(),
    description: command.description().split("\n")[0],
    flags: [
      ...command.options.flatMap((o) => (o.long ? [{ long: o.long, ...(o.short ? { short: o.short } : {}), description: o.description }] : [])),
      { long: "--help", short: "-h", description: "display help for command" },
    ],
  }));
}

const shellWord = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;

function bash(commands: CommandWords[]): string {
  const cases = commands.map((c) => `    ${c.name}) opts=${shellWord(c.flags.flatMap((f) => [f.long, ...(f.short ? [f.short] : [])]).join(" "))} ;;`).join("\n");
  return `# bonsai completion for bash: source it, or save it as ~/.local/share/bash-completion/completions/bonsai
_bonsai() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" opts=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W ${shellWord([...commands.map((c) => c.name), "--help", "--version"].join(" "))} -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _bonsai bonsai
`;
}

function zsh(commands: CommandWords[]): string {
  return `# bonsai completion for zsh: source it from ~/.zshrc (it uses bash's, through bashcompinit)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bash(commands).split("\n").slice(1).join("\n")}`;
}

function fish(commands: CommandWords[]): string {
  const lines = ["# bonsai completion for fish: save it as ~/.config/fish/completions/bonsai.fish", "complete -c bonsai -f"];
  for (const c of commands) lines.push(`complete -c bonsai -n __fish_use_subcommand -a ${c.name} -d ${shellWord(c.description)}`);
  for (const c of commands) {
    lines.push(`complete -c bonsai -n ${shellWord(`__fish_seen_subcommand_from ${c.name}`)} -F`);
    for (const f of c.flags) {
      const short = f.short ? ` -s ${f.short.slice(1)}` : "";
      lines.push(`complete -c bonsai -n ${shellWord(`__fish_seen_subcommand_from ${c.name}`)} -l ${f.long.slice(2)}${short} -d ${shellWord(f.description)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

const WRITERS: Record<Shell, (commands: CommandWords[]) => string> = { bash, zsh, fish };

export function completionScript(program: Command, shell: Shell): string {
  return WRITERS[shell](commandWords(program));
}
