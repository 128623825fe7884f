/**
 * Masks credentials in text before it leaves the machine for a summarizer (docs/ARCHITECTURE.md, where each rule lives).
 * Tool output is full of them: `cat .env`, `env`, curl commands with headers, config files.
 * The patterns aim at well-known key formats and at `NAME=value` pairs whose name says "secret";
 * ordinary text, hashes and uuids are left alone, so the summary keeps its exact identifiers.
 * Redaction is best effort: it lowers the risk, it cannot prove a prompt is clean.
 */
import type { SummarizeRequest, Summarizer } from "./types.js";

export type SecretKind =
  | "private-key"
  | "jwt"
  | "anthropic-key"
  | "openai-key"
  | "aws-access-key"
  | "github-token"
  | "slack-token"
  | "google-api-key"
  | "bearer-token"
  | "url-password"
  | "gitlab-token"
  | "stripe-key"
  | "npm-token"
  | "huggingface-token"
  | "sendgrid-key"
  | "basic-auth"
  | "cli-password"
  | "secret";

export const redactedMarker = (kind: SecretKind): string => `[REDACTED:${kind}]`;

interface Rule {
  kind: SecretKind;
  pattern: RegExp;
  /** the part kept in front of the mask (e.g. "Bearer "), from capture group 1 */
  keepPrefix?: boolean;
  /** the part kept after the mask, from the last capture group */
  keepSuffix?: boolean;
}

// Order matters: whole blocks and specific formats first, the generic NAME=value rule last, so a
// specific kind is reported and the generic rule sees values that are already masked.
const RULES: Rule[] = [
  {
    kind: "private-key",
    // A block cut short (tool output truncated mid-key) is masked to its last base64 line.
    pattern:
      /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END \1PRIVATE KEY(?: BLOCK)?-----|(?:\r?\n[A-Za-z0-9+/=:\- ,]*)*)/g,
  },
  { kind: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { kind: "anthropic-key", pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { kind: "openai-key", pattern: /\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}/g },
  { kind: "aws-access-key", pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  { kind: "github-token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b/g },
  { kind: "slack-token", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { kind: "google-api-key", pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { kind: "bearer-token", pattern: /(\b[Bb]earer\s+)[A-Za-z0-9._~+/-]{16,}=*/g, keepPrefix: true },
  { kind: "url-password", pattern: /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]{3,}(?=@)/g, keepPrefix: true },
  { kind: "gitlab-token", pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { kind: "stripe-key", pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g },
  { kind: "npm-token", pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { kind: "huggingface-token", pattern: /\bhf_[A-Za-z0-9]{30,}/g },
  { kind: "sendgrid-key", pattern: /\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g },
  { kind: "basic-auth", pattern: /(\bAuthorization:\s*Basic\s+)[A-Za-z0-9+/]{8,}=*/gi, keepPrefix: true },
  // `curl -u user:password`, `--user user:password`
  { kind: "cli-password", pattern: /((?:^|\s)(?:-u|--user)[ =]?['"]?[^\s:'"]{1,64}:)[^\s'"]{3,256}/g, keepPrefix: true },
  // `mysql -pPASSWORD`, `mysqladmin --password=PASSWORD` (a bare `-p` asks for it: nothing to mask)
  { kind: "cli-password", pattern: /(\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,200}?\s(?:-p|--password=))([^\s'"]{3,256})/g, keepPrefix: true },
];

/**
 * `NAME=value`, `NAME: value`, `"name": "value"` where the name says it holds a secret. The value
 * must look like one: no spaces, at least 8 characters, not a plain number, and not code
 * (`apiKey = getKey(…)`, `token: process.env.X`), which ends at a `(` or `.`.
 *
 * Found in linear time (a single pattern with a free-length name around the keyword backtracks
 * cubically: 10 KB of "tokentoken…" took seconds): each keyword is found once, its name is grown
 * over at most NAME_REACH name characters on either side, and the assignment after the name is
 * tried once, with bounded runs.
 */
const SECRET_KEYWORD = /api[_-]?key|apikey|secret|token|passw(?:or)?d|pwd|access[_-]?key|private[_-]?key|account[_-]?key|credentials?/gi;
const NAME_CHAR = /[A-Za-z0-9_-]/;
const NAME_REACH = 64;
const ASSIGNMENT_AT = /["']?\s{0,16}[=:]\s{0,16}["']?/y;
const SECRET_VALUE_AT = /[A-Za-z0-9_\-+/=~!@#$%^&*]{8,1024}(?=["']?(?:[\s,;}&)\]]|$))/y;

/** Each `name = value` whose name says secret, with where its value is, in order, not overlapping. */
function secretAssignments(text: string): { valueAt: number; value: string }[] {
  const found: { valueAt: number; value: string }[] = [];
  let done = 0;
  for (const keyword of text.matchAll(SECRET_KEYWORD)) {
    const at = keyword.index;
    if (at < done) continue;
    let end = at + keyword[0].length;
    const limit = Math.min(text.length, end + NAME_REACH);
    while (end < limit && NAME_CHAR.test(text[end])) end++;
    ASSIGNMENT_AT.lastIndex = end;
    if (!ASSIGNMENT_AT.exec(text)) continue;
    SECRET_VALUE_AT.lastIndex = ASSIGNMENT_AT.lastIndex;
    const value = SECRET_VALUE_AT.exec(text);
    if (!value) continue;
    found.push({ valueAt: value.index, value: value[0] });
    done = value.index + value[0].length;
  }
  return found;
}

function looksLikeSecretValue(value: string): boolean {
  if (/^\d+$/.test(value)) return false;
  if (value.startsWith("[REDACTED")) return false;
  if (/^\$\{?[A-Z_]+\}?$/.test(value)) return false; // $VAR / ${VAR}: a reference, not the secret
  if (/^(?:x+|\*+|changeme|placeholder|redacted|undefined|null|true|false)$/i.test(value)) return false;
  // Identifiers (camelCase or snake_case words, no digits) are code, not secrets, unless long.
  const hasDigit = /\d/.test(value);
  return hasDigit || value.length >= 24;
}

export interface RedactionResult {
  text: string;
  /** how many secrets of each kind were masked */
  counts: Partial<Record<SecretKind, number>>;
}

export function redactSecrets(text: string): RedactionResult {
  const counts: Partial<Record<SecretKind, number>> = {};
  const count = (kind: SecretKind) => {
    counts[kind] = (counts[kind] ?? 0) + 1;
  };
  let out = text;
  for (const rule of RULES) {
    out = out.replace(rule.pattern, (_match: string, ...groups: unknown[]) => {
      count(rule.kind);
      const prefix = rule.keepPrefix && typeof groups[0] === "string" ? groups[0] : "";
      return `${prefix}${redactedMarker(rule.kind)}`;
    });
  }
  const parts: string[] = [];
  let from = 0;
  for (const { valueAt, value } of secretAssignments(out)) {
    if (!looksLikeSecretValue(value)) continue;
    count("secret");
    parts.push(out.slice(from, valueAt), redactedMarker("secret"));
    from = valueAt + value.length;
  }
  if (from > 0) out = parts.join("") + out.slice(from);
  return { text: out, counts };
}

export function redact(text: string): string {
  return redactSecrets(text).text;
}

export interface RedactionOptions {
  /** hears how many secrets each request had masked (only when there were some) */
  onRedact?: (counts: Partial<Record<SecretKind, number>>) => void;
}

/**
 * The same summarizer, but the prompt it sends is redacted first. The system prompt is ours and
 * carries no user data, so it goes unchanged.
 */
export function withRedaction(summarizer: Summarizer, options: RedactionOptions = {}): Summarizer {
  return {
    name: summarizer.name,
    contextWindow: summarizer.contextWindow,
    reasoning: summarizer.reasoning,
    summarize(request: SummarizeRequest) {
      const { text, counts } = redactSecrets(request.prompt);
      if (options.onRedact && Object.keys(counts).length > 0) options.onRedact(counts);
      return summarizer.summarize({ ...request, prompt: text });
    },
  };
}
