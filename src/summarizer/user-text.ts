/**
 * Telling the user's own words from what only travels in a user message: prompts another
 * program injected (a system prompt, a reminder block), and pasted logs and error text. Also
 * what "the same check" is for a shell command. Used by the extractive summarizer, the verbatim
 * requests section and the coverage check, so all three agree. Pure functions.
 */

/** Tags agents wrap injected context in. */
const INJECTED_TAG = /^\s*<(?:system|system-reminder|system_prompt|system-prompt|instructions|environment|env|user-instructions|agents?-md|skill|subagent|task-notification|command-name|local-command-stdout)[\s>/]/i;
const INJECTED_HEADING = /^\s*#{1,3}\s*(?:system(?: prompt)?|instructions|AGENTS\.md|CLAUDE\.md|GEMINI\.md)\b/i;
const ROLE_PREAMBLE = /^\s*(?:You are|You're|Tu es|Eres|Sei|Du bist)\s/;
const SYSTEM_PREFIX = /^\s*\[?(?:SYSTEM|System prompt)\]?\s*:/;

/**
 * A user message another program wrote: a system-like prompt ("You are …, Tier: heavy …" over
 * several lines), an injected reminder or instructions block. Short messages that merely start
 * with "You are" ("You are wrong, the test fails") are the user's.
 */
export function isInjectedPrompt(text: string): boolean {
  if (INJECTED_TAG.test(text) || INJECTED_HEADING.test(text) || SYSTEM_PREFIX.test(text)) return true;
  if (!ROLE_PREAMBLE.test(text)) return false;
  const lines = text.split("\n").filter((line) => line.trim()).length;
  return text.length >= 400 || lines >= 4 || /\b(?:tier|role|mode|persona)\s*:/i.test(text);
}

/** Lines of command output, logs and stack traces (what a user pastes, not what a user says). */
const LOG_LINE = [
  /\berror TS\d+/,
  /(?:^|:\s)(?:error|fatal|panic|warning)(?:\[\w+\])?[:\s]/i,
  /^\s*(?:[A-Z]\w*)?(?:Error|Exception)\b[:\s]/,
  /^\s*at\s+\S+.*(?:\(|:\d+)/,
  /^\s*\[?\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}/,
  /^\s*\[?\d{1,2}:\d{2}:\d{2}\]?\s/,
  /^\s*[\w./\\-]+\.\w+[:(]\d+(?:[:,]\d+)?\)?/,
  /^\s*(?:npm|yarn|pnpm) (?:ERR!|error|warn|notice)/i,
  /^\s*(?:FAIL|PASS|not ok|ok \d+|✖|✔|×)\s/,
  /^\s*(?:WARN|INFO|DEBUG|TRACE|ERROR|CRITICAL)\b/,
  /^\s*Traceback\b|^\s*File "[^"]+", line \d+/,
  /^\s*[$%#>]\s+\S/,
  /command not found|No such file or directory|Permission denied|\bENOENT\b|\bEACCES\b|Segmentation fault/,
];

export function isLogLine(line: string): boolean {
  return LOG_LINE.some((pattern) => pattern.test(line));
}

/** The lines of a text outside fenced code blocks (``` or ~~~), the fence lines left out too. */
export function linesOutsideFences(text: string): string[] {
  const out: string[] = [];
  let inFence = false;
  for (const line of text.split("\n")) {
    if (/^\s*(?:```|~~~)/.test(line)) inFence = !inFence;
    else if (!inFence) out.push(line);
  }
  return out;
}

/** The prose of a message: fenced blocks and pasted log lines left out, line breaks kept. */
export function proseOf(text: string): string {
  return linesOutsideFences(text)
    .filter((line) => !isLogLine(line))
    .join("\n");
}

/** Programs whose first word after them is a subcommand (`npm test`, `cargo build`, `git commit`). */
const WITH_SUBCOMMAND = new Set([
  "npm", "pnpm", "yarn", "bun", "deno", "npx", "pnpx", "bunx", "cargo", "go", "git", "make", "docker",
  "kubectl", "dotnet", "mvn", "gradle", "poetry", "uv", "pip", "gh", "terraform", "mix", "rake", "bundle",
]);
/** Subcommands that name a script or tool after them (`npm run typecheck`, `uv run pytest`). */
const RUNNERS = new Set(["run", "exec", "x", "dlx", "-m"]);
/** Wrappers that do not change which check runs. */
const WRAPPERS = new Set(["sudo", "time", "env", "nice", "command", "exec", "timeout"]);

const programName = (word: string) => word.replace(/^.*[\\/]/, "");

/** The check a single command runs: its program and subcommand, or undefined for `cd` and the like. */
export function checkOf(segment: string): string | undefined {
  const words = segment.trim().split(/\s+/).filter(Boolean);
  let i = 0;
  while (i < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]) || WRAPPERS.has(words[i]) || /^\d+$/.test(words[i]))) i++;
  if (i >= words.length) return undefined;
  const program = programName(words[i]);
  if (program === "cd" || program === "pushd" || program === "export" || program === "source") return undefined;
  const key = [program];
  const python = /^python[\d.]*$/.test(program);
  if (!WITH_SUBCOMMAND.has(program) && !python) return program;
  for (let j = i + 1; j < words.length; j++) {
    const word = words[j];
    if (python ? word !== "-m" && !key.includes("-m") : word.startsWith("-")) continue;
    key.push(word);
    if (!RUNNERS.has(word) || key.length > 3) break;
  }
  return key.join(" ");
}

/**
 * The checks a command line runs, first the one it starts with: segments joined by `&&`, `;` or
 * `|` (quotes are not parsed; a command line is a hint, not a program). `cd DIR &&` is skipped.
 */
export function checksOf(command: string): string[] {
  const checks: string[] = [];
  for (const segment of command.split(/&&|\|\||;|\|/)) {
    const check = checkOf(segment);
    if (check && !checks.includes(check)) checks.push(check);
  }
  return checks;
}
