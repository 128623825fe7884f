/**
 * The transcript forms a summarization prompt may hold inside `<conversation>`: pi's and
 * bonsai's layout (`[User]: …`), and the ten forms oh-my-pi 18 writes in the summarizing model's
 * own markup (its `serializeConversationForSummary`, chosen by model id): Claude's `Human:` /
 * `<function_calls>`, MiniMax's and the XML fallback's variants of it, GPT's harmony tokens (sent
 * escaped, `<\|start\|>`), Qwen's `<|im_start|>`, GLM, Kimi, DeepSeek, Gemini and Gemma, plus
 * omp's older `[Tool Call]:` layout. Each form is one reader registered in FORMS; a transcript is
 * read by the first whose signature it carries, into the parts the extractive summarizer and the
 * coverage check read (tool calls as `name(key=<json>, …)`). Pure functions.
 */

export type PartRole = "user" | "assistant" | "thinking" | "toolCalls" | "toolResult";

export interface TranscriptPart {
  role: PartRole;
  text: string;
  /** a tool result's tool, when the transcript names it (`[Tool result (bash)]`) */
  toolName?: string;
  /** a tool result the tool flagged as failed (`[Tool result (bash, error)]`); undefined when not said */
  isError?: boolean;
}

interface TranscriptForm {
  /** whether a transcript is in this form: a marker only it writes */
  signature: { test(text: string): boolean };
  read(text: string): TranscriptPart[];
}

/** A tool call as the extractive summarizer reads calls: `name(key=<json>, …)`. */
export function callText(name: string, args: Record<string, unknown>): string {
  return `${name}(${Object.entries(args)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(", ")})`;
}

const jsonOr = (raw: string): unknown => {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
};
const jsonArgs = (raw: string): Record<string, unknown> => {
  const value = jsonOr(raw.trim());
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : { input: value };
};

/** The text after each match of `marker` up to the next, with the match. */
function segments(text: string, marker: RegExp): { head: RegExpExecArray; body: string }[] {
  const pattern = new RegExp(marker.source, marker.flags.includes("g") ? marker.flags : `${marker.flags}g`);
  const found = [...text.matchAll(pattern)] as RegExpExecArray[];
  return found.map((head, i) => ({ head, body: text.slice(head.index + head[0].length, i + 1 < found.length ? found[i + 1].index : text.length) }));
}

/** Collects what `pattern` matches in `text` (each through `take`) and returns the text without it. */
function pull(text: string, pattern: RegExp, take: (m: RegExpExecArray) => void): string {
  return text.replace(new RegExp(pattern.source, `${pattern.flags.replace("g", "")}g`), (...args) => {
    const groups = args.slice(0, -2) as unknown as RegExpExecArray;
    take(groups);
    return "\n";
  });
}

/** Adds a part unless its text is empty; neighbouring parts of one role are one part. */
function push(parts: TranscriptPart[], role: PartRole, text: string): void {
  const t = text.trim();
  if (!t) return;
  const last = parts[parts.length - 1];
  if (last && last.role === role && role !== "toolCalls" && role !== "toolResult") last.text += `\n\n${t}`;
  else parts.push({ role, text: t });
}

/** An assistant turn: reasoning, tool calls (each `take` adds calls), then its text. */
function assistantTurn(parts: TranscriptPart[], body: string, thinking: RegExp | undefined, calls: [RegExp, (m: RegExpExecArray) => string][], strip: RegExp[] = []): void {
  let rest = body;
  const thoughts: string[] = [];
  if (thinking) rest = pull(rest, thinking, (m) => thoughts.push(m[1]));
  const found: string[] = [];
  for (const [pattern, take] of calls) rest = pull(rest, pattern, (m) => found.push(take(m)));
  for (const s of strip) rest = rest.replace(new RegExp(s.source, "g"), "\n");
  for (const t of thoughts) push(parts, "thinking", t);
  push(parts, "assistant", rest);
  if (found.length > 0) parts.push({ role: "toolCalls", text: found.join("; ") });
}

/** `<invoke name="n"><parameter name="k">v</parameter>…</invoke>` (values JSON where they parse). */
const INVOKE: [RegExp, (m: RegExpExecArray) => string] = [
  /<invoke name="([^"]+)">([\s\S]*?)<\/invoke>/,
  (m) => {
    const args: Record<string, unknown> = {};
    for (const p of m[2].matchAll(/<parameter name="([^"]+)">([\s\S]*?)<\/parameter>/g)) args[p[1]] = jsonOr(p[2]);
    return callText(m[1], args);
  },
];

/** Claude's, MiniMax's and the XML fallback's `Human:` / `Assistant:` turns. */
function readHumanAssistant(text: string): TranscriptPart[] {
  const parts: TranscriptPart[] = [];
  for (const { head, body } of segments(text, /(?:^|\n)(Human|Assistant): /)) {
    if (head[1] === "Assistant") {
      assistantTurn(parts, body, /<thinking>\n?([\s\S]*?)\n?<\/thinking>/, [INVOKE], [/<\/?function_calls>/, /<\/?minimax:tool_call>/]);
      continue;
    }
    const results: string[] = [];
    let rest = pull(body, /<(?:result|error)>\s*<tool_name>[^<]*<\/tool_name>\s*<(?:stdout|stderr)>([\s\S]*?)<\/(?:stdout|stderr)>\s*<\/(?:result|error)>/, (m) => results.push(m[1]));
    rest = pull(rest, /<tool_response>\n?([\s\S]*?)\n?<\/tool_response>/, (m) => results.push(m[1]));
    rest = rest.replace(/<\/?function_results>/g, "");
    for (const r of results) parts.push({ role: "toolResult", text: r.trim() });
    push(parts, "user", rest);
  }
  return parts;
}

/** GPT's harmony tokens, escaped or not: `<|start|>who<|channel|>c<|message|>…<|end|>`. */
function readHarmony(text: string): TranscriptPart[] {
  const parts: TranscriptPart[] = [];
  const plain = text.replace(/<\\\|/g, "<|").replace(/\\\|>/g, "|>");
  for (const { head, body } of segments(plain, /<\|start\|>([^<]*?)(?:<\|channel\|>([^<]*?))?<\|message\|>/)) {
    const message = body.replace(/<\|(?:end|call|return)\|>[\s\S]*$/, "");
    const [who, channel = ""] = [head[1].trim(), head[2]?.trim()];
    const callTo = /to=functions\.([^\s<]+)/.exec(channel);
    if (who === "user") push(parts, "user", message);
    else if (who.startsWith("functions.")) parts.push({ role: "toolResult", text: message.trim() });
    else if (who === "assistant" && callTo) parts.push({ role: "toolCalls", text: callText(callTo[1], jsonArgs(message)) });
    else if (who === "assistant") push(parts, channel === "analysis" ? "thinking" : "assistant", message);
  }
  return parts;
}

const THINK = /<think>\n?([\s\S]*?)\n?<\/think>/;

/** Qwen's `<|im_start|>role … <|im_end|>` turns. */
function readQwen(text: string): TranscriptPart[] {
  const parts: TranscriptPart[] = [];
  for (const { head, body } of segments(text, /<\|im_start\|>(\w+)\n/)) {
    const turn = body.replace(/<\|im_end\|>[\s\S]*$/, "");
    if (head[1] === "assistant") {
      assistantTurn(parts, turn, THINK, [[/<tool_call>\n?([\s\S]*?)\n?<\/tool_call>/, (m) => {
        const call = jsonArgs(m[1]) as { name?: unknown; arguments?: unknown };
        return callText(String(call.name ?? "tool"), (call.arguments as Record<string, unknown>) ?? {});
      }]]);
    } else if (head[1] === "user") {
      const rest = pull(turn, /<tool_response>\n?([\s\S]*?)\n?<\/tool_response>/, (m) => parts.push({ role: "toolResult", text: m[1].trim() }));
      push(parts, "user", rest);
    }
  }
  return parts;
}

/** GLM's `<|user|>`, `<|assistant|>` and `<|observation|>` turns. */
function readGlm(text: string): TranscriptPart[] {
  const parts: TranscriptPart[] = [];
  for (const { head, body } of segments(text, /<\|(user|assistant|observation|system)\|>/)) {
    if (head[1] === "user") push(parts, "user", body);
    else if (head[1] === "observation") pull(body, /<tool_response>\n?([\s\S]*?)\n?<\/tool_response>/, (m) => parts.push({ role: "toolResult", text: m[1].trim() }));
    else if (head[1] === "assistant") {
      assistantTurn(parts, body, THINK, [[/<tool_call>([^\n<]+)\n?([\s\S]*?)<\/tool_call>/, (m) => {
        const args: Record<string, unknown> = {};
        for (const a of m[2].matchAll(/<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>([\s\S]*?)<\/arg_value>/g)) args[a[1]] = jsonOr(a[2]);
        return callText(m[1].trim(), args);
      }]]);
    }
  }
  return parts;
}

/** Kimi's `<|im_user|>`, `<|im_assistant|>` and `<|im_system|>` (tool result) turns. */
function readKimi(text: string): TranscriptPart[] {
  const parts: TranscriptPart[] = [];
  for (const { head, body } of segments(text, /<\|im_(user|assistant|system)\|>[^<]*<\|im_middle\|>/)) {
    const turn = body.replace(/<\|im_end\|>[\s\S]*$/, "");
    if (head[1] === "user") push(parts, "user", turn);
    else if (head[1] === "system") parts.push({ role: "toolResult", text: turn.replace(/^## Return of [^\n]*\n?/, "").trim() });
    else {
      assistantTurn(parts, turn, THINK, [[/<\|tool_call_begin\|>(?:functions\.)?([^:<]+)(?::\d+)?<\|tool_call_argument_begin\|>([\s\S]*?)<\|tool_call_end\|>/, (m) => callText(m[1], jsonArgs(m[2]))]], [/<\|tool_calls_section_(?:begin|end)\|>/]);
    }
  }
  return parts;
}

/** DeepSeek's `<｜User｜>` and `<｜Assistant｜>` turns with `<｜tool▁output▁begin｜>` results. */
function readDeepSeek(text: string): TranscriptPart[] {
  const parts: TranscriptPart[] = [];
  for (const { head, body } of segments(text, /<｜(User|Assistant|tool▁output▁begin)｜>/)) {
    if (head[1] === "User") push(parts, "user", body);
    else if (head[1] === "tool▁output▁begin") parts.push({ role: "toolResult", text: body.replace(/<｜tool▁output▁end｜>[\s\S]*$/, "").trim() });
    else {
      const turn = body.replace(/<｜end▁of▁sentence｜>[\s\S]*$/, "");
      assistantTurn(parts, turn, THINK, [[/<｜tool▁call▁begin｜>([^<]+)<｜tool▁sep｜>([\s\S]*?)<｜tool▁call▁end｜>/, (m) => callText(m[1].trim(), jsonArgs(m[2]))]], [/<｜tool▁calls▁(?:begin|end)｜>/]);
    }
  }
  return parts;
}

/** `name(k="v", n=1)` as Gemini's tool_code writes calls (values JSON where they parse). */
function pythonCall(code: string): string | undefined {
  const m = /^\s*(?:default_api\.)?([\w.-]+)\(([\s\S]*)\)\s*$/.exec(code);
  if (!m) return undefined;
  const args: Record<string, unknown> = {};
  for (const a of m[2].matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|[^,]+)/g)) args[a[1]] = jsonOr(a[2].trim());
  return callText(m[1], args);
}

/** Gemini's `<start_of_turn>user|model … <end_of_turn>` turns with fenced tool code and outputs. */
function readGemini(text: string): TranscriptPart[] {
  const parts: TranscriptPart[] = [];
  for (const { head, body } of segments(text, /<start_of_turn>(user|model)\n/)) {
    const turn = body.replace(/<end_of_turn>[\s\S]*$/, "");
    if (head[1] === "model") {
      assistantTurn(parts, turn, /```thinking\n?([\s\S]*?)\n?```/, [[/```tool_code\n?([\s\S]*?)\n?```/, (m) => m[1].split("\n").map(pythonCall).filter(Boolean).join("; ")]]);
      const last = parts[parts.length - 1];
      if (last?.role === "toolCalls" && last.text === "") parts.pop(); // an empty `[]` block
    } else {
      const rest = pull(turn, /```tool_outputs\n?([\s\S]*?)\n?```/, (m) => parts.push({ role: "toolResult", text: m[1].trim() }));
      push(parts, "user", rest);
    }
  }
  return parts;
}

/** `{k:<|"|>v<|"|>,n:1}` as Gemma writes arguments. */
function gemmaArgs(body: string): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const a of body.matchAll(/(\w+):(?:<\|"\|>([\s\S]*?)<\|"\|>|([^,}]*))/g)) args[a[1]] = a[2] !== undefined ? a[2] : jsonOr(a[3] ?? "");
  return args;
}

/** Gemma's `<|turn>user|model … <turn|>` turns with inline tool calls and responses. */
function readGemma(text: string): TranscriptPart[] {
  const parts: TranscriptPart[] = [];
  for (const { head, body } of segments(text, /<\|turn>(user|model)\n/)) {
    const turn = body.replace(/<turn\|>[\s\S]*$/, "");
    if (head[1] === "user") {
      push(parts, "user", turn);
      continue;
    }
    const results: string[] = [];
    const rest = pull(turn, /<\|tool_response>response:[\w.-]+\{output:<\|"\|>([\s\S]*?)<\|"\|>\}<tool_response\|>/, (m) => results.push(m[1]));
    assistantTurn(parts, rest, /<\|channel>thought\n?([\s\S]*?)<channel\|>/, [[/<\|tool_call>call:([\w.-]+)\{([\s\S]*?)\}<tool_call\|>/, (m) => callText(m[1], gemmaArgs(m[2]))]]);
    for (const r of results) parts.push({ role: "toolResult", text: r.trim() });
  }
  return parts;
}

/** omp's own older layout: `[User]:`, `[Think]:`, `[Tool Call]:`, `[Tool Result]:`, `[Assistant]:`. */
function readOmpLegacy(text: string): TranscriptPart[] {
  const roles: Record<string, PartRole> = { User: "user", Think: "thinking", "Tool Call": "toolCalls", "Tool Result": "toolResult", Assistant: "assistant" };
  const parts: TranscriptPart[] = [];
  for (const { head, body } of segments(text, /(?:^|\n\n)\[(User|Think|Tool Call|Tool Result|Assistant)\]: /)) parts.push({ role: roles[head[1]], text: body.trim() });
  return parts;
}

/**
 * Whether one of `markers` starts the text or follows a blank line: what /(?:^|\n\n)\[(?:…)\]: /
 * says, by searching for the markers themselves, because that pattern steps through every
 * character of a transcript in none of these forms (the usual case) and this runs on every one.
 */
function startsAPart(markers: readonly string[]): (text: string) => boolean {
  // one pass over the blank lines, not one per marker: every marker opens with the same character
  const opening = markers[0][0];
  if (markers.some((marker) => marker[0] !== opening)) throw new Error("startsAPart: the markers must open with the same character");
  const blankThen = `\n\n${opening}`;
  const startsHere = (text: string, at: number) => markers.some((marker) => text.startsWith(marker, at));
  return (text) => {
    if (startsHere(text, 0)) return true;
    for (let at = text.indexOf(blankThen); at >= 0; at = text.indexOf(blankThen, at + 1)) if (startsHere(text, at + 2)) return true;
    return false;
  };
}

/** Checked in order: a form whose signature another form's text may quote comes first. */
export const FORMS: Record<string, TranscriptForm> = {
  harmony: { signature: /^\s*<\\?\|start\\?\|>/, read: readHarmony },
  qwen: { signature: /^\s*<\|im_start\|>/, read: readQwen },
  glm: { signature: /^\s*\[gMASK\]<sop>|^\s*<\|(?:user|system)\|>\n/, read: readGlm },
  kimi: { signature: /^\s*<\|im_(?:user|system|assistant)\|>/, read: readKimi },
  deepseek: { signature: /^\s*<｜begin▁of▁sentence｜>|^\s*<｜User｜>/, read: readDeepSeek },
  gemini: { signature: /^\s*(?:<bos>)?<start_of_turn>/, read: readGemini },
  gemma: { signature: /^\s*(?:<bos>)?<\|turn>/, read: readGemma },
  humanAssistant: { signature: /^\s*(?:Human|Assistant): /, read: readHumanAssistant },
  // pi's layout shares `[User]:` and `[Assistant]:`; only omp's writes these three
  ompLegacy: { signature: { test: startsAPart(["[Think]: ", "[Tool Call]: ", "[Tool Result]: "]) }, read: readOmpLegacy },
};

/** The parts of a transcript in one of the forms above; undefined when it is in none (pi's layout). */
export function readTranscriptForm(text: string): TranscriptPart[] | undefined {
  for (const form of Object.values(FORMS)) if (form.signature.test(text)) return form.read(text);
  return undefined;
}
