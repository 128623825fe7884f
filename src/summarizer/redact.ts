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
];

/**
 * `NAME=value`, `NAME: value`, `"name": "value"` where the name says it holds a secret. The value
 * must look like one: no spaces, at least 8 characters, not a plain number, and not code
 * (`apiKey = getKey(…)`, `token: process.env.X`), which ends at a `(` or `.`.
 */
const SECRET_NAME =
  /([A-Za-z0-9_-]*(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|pwd|access[_-]?key|private[_-]?key|credentials?)[A-Za-z0-9_-]*)/i;
const SECRET_ASSIGNMENT = new RegExp(
  `(${SECRET_NAME.source}["']?\\s*(?:=|:)\\s*["']?)([A-Za-z0-9_\\-+/=~!@#$%^&*]{8,})(?=["']?(?:[\\s,;}&)\\]]|$))`,
  "gi",
);

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
  out = out.replace(SECRET_ASSIGNMENT, (match: string, prefix: string, _name: string, value: string) => {
    if (!looksLikeSecretValue(value)) return match;
    count("secret");
    return `${prefix}${redactedMarker("secret")}`;
  });
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
