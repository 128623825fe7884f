/**
 * What a transcript says happened, extracted without a model: the user's requests and
 * constraints, the assistant's decisions and plans, file operations and commands with their
 * outcome, and the errors that are still unresolved. Sentences are copied verbatim (never
 * translated or rephrased), so the summary keeps the conversation's language. Pure functions.
 */
import { parseToolCalls, type TranscriptPart } from "./extractive-parse.js";
import { commandText, fileToolCalls, fileToolKind } from "./file-tools.js";
import { type CheckKind, checkKind, currentItems, currentItemsAfter, mayRetire, type Placed, type Retirement, retiredValues, retirementsOf } from "./lifecycle.js";
import { listItems, sentences } from "./sentences.js";
import { checksOf, isInjectedPrompt, isLogLine, proseOf } from "./user-text.js";

export interface FileOperation {
  path: string;
  kind: "read" | "write" | "edit";
  ok: boolean;
  /** index of the tool-call part in the span */
  at: number;
}

export interface CommandRun {
  command: string;
  ok: boolean;
}

export interface OpenError {
  /** what failed: "`npm test`" or "edit `src/a.ts`" */
  subject: string;
  line: string;
  /** the command or file whose later success resolves this error */
  key: string;
  /** the kind of check that failed: a later passing run of any check of this kind resolves it too */
  kind?: CheckKind;
  /** a file was changed after the failure, but the check has not run again: fixed, not verified */
  changedSince?: boolean;
  /** index of the failing result's part in the span */
  at: number;
}

/** An open error as one line: what failed and how, and whether a change since is still to be verified. */
export const errorText = (error: OpenError): string =>
  `${error.subject}: ${error.line}${error.changedSince ? " (changed since; not re-run)" : ""}`;

export interface ConversationFacts {
  /** substantive user messages, in order */
  requests: string[];
  /** the user's requests and the assistant's texts with their place in the span, in order */
  said: { role: "user" | "assistant"; text: string; at: number }[];
  /** every message the user typed (a bare "yes" too), with its place */
  userTurns: { text: string; at: number }[];
  /** summaries quoted inside the conversation (earlier compactions, branch summaries) */
  quotedSummaries: string[];
  assistantTexts: string[];
  fileOps: FileOperation[];
  commands: CommandRun[];
  /** errors not followed by a success of the same command or file */
  openErrors: OpenError[];
  /** the conversation stops in the middle of a turn (tool work after the last answer) */
  endsMidTurn: boolean;
  /** the assistant's last text, when it came after the last user message */
  finalAnswer?: string;
  lastRequest?: string;
}

/** Tools whose output is content (files, listings), where words like "error" are not failures. */
const CONTENT_TOOLS = new Set(["read", "grep", "find", "ls", "glob", "search", "fetch", "web_fetch", "web_search", "webfetch", "websearch"]);
const isContentTool = (name: string) => CONTENT_TOOLS.has(name.toLowerCase()) || fileToolKind(name, undefined) === "read";

/** `alternatives` as whole words, for `test` only: the character before is matched, not looked behind at (twice as fast over a long span). */
const words = (alternatives: string) => new RegExp(`(?:^|[^\\p{L}\\p{N}])(?:${alternatives})(?![\\p{L}\\p{N}])`, "iu");

const CONSTRAINT = words(
  [
    "must(?:n't)?|should(?:n't)?|don't|don’t|do not|never|always|prefer(?:red|s)?|make sure|avoid|need to|needs to|have to|has to|required?|without|no new|leave (?:\\S+ ){0,4}alone|important(?=:)",
    // "non" only before a word: "non usare …", not "non-root"
    "deve|devono|devi|dobbiamo|bisogna|non(?= \\p{L})|mai|sempre|preferisc\\p{L}*|evita\\p{L}*|assicurati|solo",
    "debe|deben|nunca|siempre|prefiero|asegúrate",
    "doit|doivent|jamais|toujours|préfère|évite\\p{L}*|seulement",
    "muss|müssen|soll|sollte|nie|niemals|immer|bevorzug\\p{L}*|vermeide\\p{L}*|nur|keine?[nmrs]?|wichtig(?=:)",
  ].join("|"),
);
const DECISION = words(
  [
    "decided|instead|because|will use|I'll use|we'll use|going with|chose|opted|rather than|switch(?:ed)? to|the fix is|the approach",
    "deciso|invece|perché|userò|useremo|scelto",
    "decidí|decidimos|en lugar de|porque|usaré|usaremos|elegí",
    "décidé|au lieu de|parce que|utiliserai|choisi",
    "entschieden|statt|stattdessen|anstatt|weil|gewählt|wechsle zu|gewechselt",
  ].join("|"),
);
const NEXT = words(
  [
    "next|then|remaining|todo|to do|still need|afterwards|after that|once .* is|let me|I'll|we'll|should now",
    "poi|dopo|prossim\\p{L}*|ancora|luego|después|siguiente|ensuite|puis|prochain\\p{L}*|danach|als nächstes",
  ].join("|"),
);
/**
 * A sentence that says what the assistant is about to do: a next step, not a decision, even when
 * it names a reason ("I'll fetch one more task to decide").
 */
const INTENT =
  /^(?:(?:now|next|first|then|so|ok(?:ay)?)[,\s]+)?(?:I'll|I will|I'm going to|I am going to|I need to|I want to|let me|let's|we'll|we will|we need to|going to|ora |adesso |vado a|voy a|vamos a|je vais|nous allons|ich werde|wir werden|lass mich)/i;
export const isIntent = (sentence: string): boolean => INTENT.test(sentence.trim());
const FILLER = /^(?:ok(?:ay)?|yes|yeah|yep|sure|continue|go on|go ahead|thanks?|thank you|do it|proceed|sì|si|oui|ja|vai|continua)\b/i;
/** A user message that starts with a yes, a no or a go-ahead ("yes please", "No, keep it"): it answers the question before it. */
const ANSWER =
  /^(?:ok(?:ay)?|yes|yeah|yep|yup|sure|please|no|nope|nah|correct|right|exactly|continue|proceed|go ahead|do it|sounds good|thanks?|sì|si|no|certo|procedi|vai|oui|non|ja|nein|doch|genau|gerne|sí|vale|claro)(?![\p{L}\p{N}])/iu;
export const isAnswer = (text: string): boolean => ANSWER.test(text.trim());

/** Lines that report a failure in command or tool output (compiler, npm, test runners, shells). */
const ERROR_LINE =
  /\berror TS\d+|(?:^|:\s)(?:error|fatal|panic)(?:\[\w+\])?[:\s]|^\s*(?:[A-Z]\w*)?(?:Error|Exception)\b[:\s]|^npm (?:ERR!|error)|^\s*(?:FAIL|not ok)\b|^Traceback\b|command not found|No such file or directory|Permission denied|\bENOENT\b|\bEACCES\b|^\s*✖/;
const FAILED_TOOL = /^(?:Could not|Cannot|Can't|Failed|Error|No such|Unable to)\b/i;
const EXIT_CODE = /(?:exited with code|exit code:?)\s*([1-9]\d*)/i;

/** The most telling error line of a tool result, or undefined when it reports no failure. */
export function errorLine(output: string, toolName?: string, kind?: FileOperation["kind"]): string | undefined {
  if (kind === "read" || (toolName && isContentTool(toolName))) return undefined;
  const lines = output.split("\n");
  const changesFiles = kind === "edit" || kind === "write" || toolName === "edit" || toolName === "write";
  if (changesFiles && FAILED_TOOL.test(output.trim())) return lines[0].trim();
  const specific = lines.find((line) => ERROR_LINE.test(line));
  if (specific) return specific.trim();
  const exit = lines.find((line) => EXIT_CODE.test(line));
  return exit?.trim();
}

export const isSubstantiveRequest = (text: string): boolean => {
  const t = text.trim();
  if (isInjectedPrompt(t)) return false;
  if (t.startsWith("/") && !/\s/.test(t)) return false; // slash commands like /mode
  if (t.length < 25 && FILLER.test(t)) return false;
  return t.length >= 8;
};

/** "Only …" states a rule at the start of a sentence; elsewhere ("with only `done`") it rarely does. */
const ONLY = /^(?:only|just)\s/i;
/** Quoted text ("…", “…”, «…»): someone else's words, not the user's rule. */
const QUOTED = /"[^"\n]*"|“[^”\n]*”|„[^“”\n]*[“”]|«[^»\n]*»/g;
const unquoted = (sentence: string) => sentence.replace(QUOTED, " ");

/**
 * Sentences that state a rule; questions are left out (they ask, they do not constrain), and so
 * are pasted logs and error text, and a rule word only inside quotes does not count.
 */
export const constraintSentences = (texts: readonly string[], retiring = true) =>
  texts
    .map(proseOf)
    .flatMap(sentences)
    .filter((s) => {
      const own = unquoted(s);
      // a correction states the requirement that holds now ("no, not 8080, use 8443"); `retiring`
      // false: the texts were found to hold no correction, nor does a sentence of one unless
      // taking out a quote joined words ("instead"x"of Redis")
      return (CONSTRAINT.test(own) || ONLY.test(own) || ((retiring || own !== s) && retiredValues(own).length > 0)) && !/[?？]$/.test(s) && !isLogLine(s);
    });
/**
 * A sentence that weighs one way against another ("…rather than…", "…instead of…"): a choice even
 * when it is phrased as what the assistant is about to do ("I'll use commander's option API
 * rather than parsing argv by hand").
 */
const CHOICE = words(["rather than|instead of|in favou?r of", "invece di|piuttosto che|en lugar de|en vez de|au lieu de|plutôt que|statt|anstatt"].join("|"));

/** A sentence that reports work finished ("Done: …"): progress, not a choice, whatever words it repeats from the request. */
const REPORT = /^(?:done|finished|completed|fatto|erledigt|listo|terminé)\s*[:.,!–-]/i;

/** Sentences that report a choice; statements of intent are next steps, not decisions, unless they weigh one way against another. */
export const decisionSentences = (texts: readonly string[]) =>
  texts
    .filter((text) => DECISION.test(text))
    .flatMap(sentences)
    .filter((s) => DECISION.test(s) && !REPORT.test(s.trim()) && (!isIntent(s) || CHOICE.test(s)));

/** A sentence placed just after the text it is from, which was at `from`. */
export interface PlacedSentence extends Placed {
  from: number;
}

/** Each sentence of each text, placed just after its text's place, in order. */
const placedSentences = <T extends Placed>(texts: readonly T[], pick: (text: string, placed: T) => string[]): PlacedSentence[] =>
  texts.flatMap((placed) => pick(placed.text, placed).map((sentence, k) => ({ text: sentence, at: placed.at + (k + 1) / 1e4, from: placed.at })));

/** mayRetire of a text of the span, kept by its record: the span's rules ask it of the same texts several times. */
const retiringTexts = new WeakMap<Placed, boolean>();
function mayRetirePlaced(placed: Placed): boolean {
  let known = retiringTexts.get(placed);
  if (known === undefined) {
    known = mayRetire(placed.text);
    retiringTexts.set(placed, known);
  }
  return known;
}

/** placedSentences of the texts that can retire a value: the others' sentences retire nothing, and are not split. */
const correctingSentences = (texts: readonly Placed[], pick: (text: string) => string[]): Placed[] => placedSentences(texts.filter(mayRetirePlaced), pick);

/**
 * The user's constraints that still hold: those of `older` requests (quoted by an earlier
 * summary, before the span) and of the span's, less every one a later sentence of the user
 * corrected ("no, not 8080, use 8443" retires "Serve it on port 8080").
 */
export function currentConstraints(facts: Pick<ConversationFacts, "said">, older: readonly string[] = []): string[] {
  return placedConstraints(facts, older).map((item) => item.text);
}

/** currentConstraints with each one's place: its text's part in the span (-1 for `older`), plus a fraction per sentence. */
export function placedConstraints(facts: Pick<ConversationFacts, "said">, older: readonly string[] = []): PlacedSentence[] {
  const user = facts.said.filter((s) => s.role === "user");
  const items = placedSentences([...older.map((text) => ({ text, at: -1 })), ...user], (text, placed) => constraintSentences([text], mayRetirePlaced(placed)));
  return currentItems(items, correctingSentences(user, (text) => sentences(proseOf(text))));
}

/** The assistant's decisions that still hold: less those a later sentence of the user or the assistant reversed. */
export function currentDecisions(facts: Pick<ConversationFacts, "said">): string[] {
  return placedDecisions(facts).map((item) => item.text);
}

/** currentDecisions with each one's place, as placedConstraints. */
export function placedDecisions(facts: Pick<ConversationFacts, "said">): PlacedSentence[] {
  const items = placedSentences(
    facts.said.filter((s) => s.role === "assistant"),
    (text) => decisionSentences([text]),
  );
  return currentItemsAfter(items, retirementsBy(facts, "anyone"));
}

/** The span's sentences that can retire what came before: the user's, or everyone's. */
const correctionsOf = (facts: Pick<ConversationFacts, "said">, by: "user" | "anyone"): Placed[] =>
  correctingSentences(
    facts.said.filter((s) => by === "anyone" || s.role === "user"),
    sentences,
  );

/** What the span's sentences retire, read once per span (its `said` list) and speaker: many items are checked against them. */
const spanRetirements = new WeakMap<object, Map<string, Retirement[]>>();
function retirementsBy(facts: Pick<ConversationFacts, "said">, by: "user" | "anyone"): Retirement[] {
  const bySpeaker = spanRetirements.get(facts.said) ?? new Map<string, Retirement[]>();
  spanRetirements.set(facts.said, bySpeaker);
  const retirements = bySpeaker.get(by) ?? retirementsOf(correctionsOf(facts, by));
  bySpeaker.set(by, retirements);
  return retirements;
}

/** Whether a later sentence of the span retires `item` (a constraint or decision of an earlier summary). */
export function retiredBySpan(item: string, facts: Pick<ConversationFacts, "said">, by: "user" | "anyone"): boolean {
  return currentItemsAfter([{ text: item, at: -1 }], retirementsBy(facts, by)).length === 0;
}

/**
 * `text` (an item of an earlier summary, or a request at place `at`) without its sentences that a
 * later sentence of the span retired; undefined when none is left. Unchanged when none was retired.
 */
export function stillStated(text: string, facts: Pick<ConversationFacts, "said">, by: "user" | "anyone", at = -1): string | undefined {
  const parts = placedSentences([{ text, at }], (t) => sentences(proseOf(t)));
  const kept = currentItemsAfter(parts, retirementsBy(facts, by));
  if (kept.length === parts.length) return text;
  return kept.length > 0 ? kept.map((p) => p.text).join(" ") : undefined;
}

/** The last question the assistant asked in `text` (verbatim), if it asked one. */
export function lastQuestion(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const asked = sentences(text).filter((s) => /[?？]\W*$/.test(s));
  if (asked.length > 0) return asked[asked.length - 1];
  const lines = text.trim().split("\n");
  const last = lines[lines.length - 1]?.trim();
  return last && /[?？]\W*$/.test(last) ? last : undefined;
}
export const plannedSteps = (text: string): string[] => {
  const items = listItems(text);
  return items.length > 0 ? items.slice(0, 10) : sentences(text).filter((s) => NEXT.test(s)).slice(-5);
};

/** Shell commands that only look at things; they are context, not progress. */
const INSPECTION =
  /^(?:cat|ls|grep|rg|find|head|tail|wc|echo|pwd|tree|which|file|stat|less|more|diff|sed -n|awk|jq|git (?:status|diff|log|show|branch|remote))\b/;
export function isInspection(command: string): boolean {
  const bare = command.trim().replace(/^(?:cd\s+\S+\s*(?:&&|;)\s*)+/, "");
  return INSPECTION.test(bare);
}

/** Tools that run a shell command (`command` argument). */
const SHELL_TOOLS = new Set(["bash", "shell", "local_shell", "exec", "exec_command", "container.exec", "run_command", "run_terminal_cmd", "terminal"]);

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();
const firstLine = (text: string) => text.split("\n").find((line) => line.trim() !== "")?.trim() ?? "(failed)";
const codeSpan = (text: string, max = 120) => {
  const line = oneLine(text);
  return `\`${line.length > max ? `${line.slice(0, max - 1)}…` : line}\``;
};

export function extractFacts(parts: readonly TranscriptPart[]): ConversationFacts {
  const facts: ConversationFacts = {
    requests: [],
    said: [],
    userTurns: [],
    quotedSummaries: [],
    assistantTexts: [],
    fileOps: [],
    commands: [],
    openErrors: [],
    endsMidTurn: false,
  };
  const errors: OpenError[] = [];
  const resolve = (key: string, kind?: CheckKind) => {
    for (let i = errors.length - 1; i >= 0; i--) if (errors[i].key === key || (kind && errors[i].kind === kind)) errors.splice(i, 1);
  };
  /** calls waiting for their results, in order, with the records their outcome updates */
  let pending: { name: string; args: Record<string, unknown>; ops: FileOperation[]; run?: CommandRun }[] = [];
  let lastUserIndex = -1;
  let lastAnswerIndex = -1;

  parts.forEach((part, index) => {
    switch (part.role) {
      case "user": {
        lastUserIndex = index;
        const quoted = /<summary>\n([\s\S]*?)\n<\/summary>/.exec(part.text);
        if (quoted) {
          facts.quotedSummaries.push(quoted[1]);
          break;
        }
        const userRun = /^Ran `([^\n]*)`\n/.exec(part.text);
        if (userRun) {
          const ok = !EXIT_CODE.test(part.text) && !/\(command cancelled\)/.test(part.text);
          facts.commands.push({ command: userRun[1], ok });
          break;
        }
        if (!isInjectedPrompt(part.text.trim())) facts.userTurns.push({ text: part.text.trim(), at: index });
        if (isSubstantiveRequest(part.text)) {
          facts.requests.push(part.text.trim());
          facts.said.push({ role: "user", text: part.text.trim(), at: index });
          facts.lastRequest = part.text.trim();
        }
        break;
      }
      case "assistant":
        facts.assistantTexts.push(part.text);
        facts.said.push({ role: "assistant", text: part.text, at: index });
        lastAnswerIndex = index;
        break;
      case "toolCalls":
        pending = parseToolCalls(part.text).map((call) => {
          const entry: (typeof pending)[number] = { ...call, ops: [] };
          // Optimistic until a result says otherwise: a call whose result is missing still happened.
          for (const file of fileToolCalls(call.name, call.args)) {
            const op: FileOperation = { path: file.path, kind: file.kind, ok: true, at: index };
            entry.ops.push(op);
            facts.fileOps.push(op);
          }
          const command = SHELL_TOOLS.has(call.name.toLowerCase()) && entry.ops.length === 0 ? commandText(call.args.command ?? call.args.cmd) : undefined;
          if (command !== undefined) {
            entry.run = { command, ok: true };
            facts.commands.push(entry.run);
          }
          return entry;
        });
        break;
      case "toolResult": {
        const call = pending.shift();
        if (!call) break;
        // what identifies a file call: its first file (a patch may change several)
        const op = call.ops[0];
        // a result the tool flagged as failed is a failure whatever its text says; otherwise the text is read
        let failure = errorLine(part.text, call.name, op?.kind) ?? (part.isError ? firstLine(part.text) : undefined);
        // grep and friends exit 1 for "nothing found": an answer, not a failure.
        if (failure && call.run && isInspection(call.run.command) && EXIT_CODE.test(failure) && !ERROR_LINE.test(failure)) {
          failure = undefined;
        }
        // A check is a program and its subcommand: a later successful run of it clears its error,
        // whatever is chained after it (`npm run typecheck && npm run lint` clears `npm run typecheck`).
        const checks = call.run ? checksOf(call.run.command) : [];
        const key = call.run ? `bash:${checks[0] ?? call.run.command}` : op ? `file:${op.path}` : `tool:${call.name}`;
        const kind = call.run ? checkKind(call.run.command) : undefined;
        if (!failure) {
          resolve(key, kind);
          for (const check of checks) resolve(`bash:${check}`, checkKind(check));
          // a change to a file may be the fix of an earlier failure: it is still to be verified
          if (op && op.kind !== "read") for (const error of errors) if (error.kind) error.changedSince = true;
          break;
        }
        for (const file of call.ops) file.ok = false;
        if (call.run) call.run.ok = false;
        const subject = call.run ? codeSpan(call.run.command, 80) : op ? `${call.name} ${codeSpan(op.path)}` : call.name;
        resolve(key); // the same check failing again: its newest failure is the one that stands
        errors.push(kind ? { subject, line: failure, key, kind, at: index } : { subject, line: failure, key, at: index });
        break;
      }
      default:
        break;
    }
  });
  facts.openErrors = errors;
  const last = parts[parts.length - 1];
  facts.endsMidTurn = last !== undefined && (last.role === "toolCalls" || last.role === "toolResult" || last.role === "thinking");
  if (lastAnswerIndex > lastUserIndex) facts.finalAnswer = parts[lastAnswerIndex].text;
  return facts;
}

export { codeSpan };
