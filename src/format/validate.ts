/**
 * Structural checks for lines read from a session file. Hand-written rather than schema-driven
 * because they run once per entry on every open: each check returns the first problem as a short
 * phrase ("field `parentId` must be a string or null") or undefined when the value is usable.
 */
import type { SessionEntry, SessionHeader } from "./entry-types.js";
import { foreignSessionFormat, foreignSessionMessage } from "./foreign.js";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === "string";

function requireField(obj: Json, key: string, check: (v: unknown) => boolean, expected: string): string | undefined {
  return check(obj[key]) ? undefined : `field \`${key}\` must be ${expected}`;
}

function optionalField(obj: Json, key: string, check: (v: unknown) => boolean, expected: string): string | undefined {
  return obj[key] === undefined || check(obj[key]) ? undefined : `field \`${key}\` must be ${expected}`;
}

const isContent = (v: unknown) => isString(v) || (Array.isArray(v) && v.every(isObject));
const isBoolean = (v: unknown) => typeof v === "boolean";
const isNumber = (v: unknown) => typeof v === "number" && Number.isFinite(v);

/** Known entry types and the checks of their own fields. Unknown types are kept opaque. */
const ENTRY_CHECKS: Record<string, (e: Json) => string | undefined> = {
  message: (e) => {
    if (!isObject(e.message)) return "field `message` must be an object";
    const m = e.message;
    if (!isString(m.role)) return "field `message.role` must be a string";
    switch (m.role) {
      case "user":
      case "custom":
      case "hookMessage":
        return isContent(m.content) ? undefined : "field `message.content` must be a string or a list of blocks";
      case "system": // pi ≥ 0.87 reads a null content as empty
        return m.content === null || m.content === undefined || isContent(m.content) ? undefined : "field `message.content` must be a string or a list of blocks";
      case "assistant":
      case "toolResult":
        return Array.isArray(m.content) && m.content.every(isObject)
          ? undefined
          : "field `message.content` must be a list of blocks";
      case "bashExecution":
        return isString(m.command) && isString(m.output)
          ? undefined
          : "fields `message.command` and `message.output` must be strings";
      case "pythonExecution":
        return isString(m.code) && isString(m.output)
          ? undefined
          : "fields `message.code` and `message.output` must be strings";
      case "fileMention":
        return Array.isArray(m.files) && m.files.every((f) => isObject(f) && isString(f.path))
          ? undefined
          : "field `message.files` must be a list of files with a string `path`";
      case "branchSummary":
      case "compactionSummary":
        return isString(m.summary) ? undefined : "field `message.summary` must be a string";
      default:
        return undefined;
    }
  },
  thinking_level_change: (e) => requireField(e, "thinkingLevel", (v) => isString(v) || v === null, "a string or null"),
  model_change: (e) =>
    isString(e.model) || (isString(e.provider) && isString(e.modelId))
      ? undefined
      : "needs `model` or `provider` and `modelId` as strings",
  compaction: (e) =>
    requireField(e, "summary", isString, "a string") ??
    (e.firstKeptEntryId === undefined && isNumber(e.firstKeptEntryIndex)
      ? undefined // v1 shape, converted by migration
      : requireField(e, "firstKeptEntryId", isString, "a string")) ??
    optionalField(e, "tokensBefore", isNumber, "a number"),
  branch_summary: (e) =>
    requireField(e, "summary", isString, "a string") ?? optionalField(e, "fromId", isString, "a string"),
  custom: (e) => requireField(e, "customType", isString, "a string"),
  custom_message: (e) =>
    requireField(e, "customType", isString, "a string") ??
    requireField(e, "content", isContent, "a string or a list of blocks") ??
    optionalField(e, "display", isBoolean, "a boolean"),
  label: (e) =>
    requireField(e, "targetId", isString, "a string") ??
    optionalField(e, "label", (v) => isString(v) || v === null, "a string"),
  session_info: (e) => optionalField(e, "name", isString, "a string"),
  ttsr_injection: (e) =>
    requireField(e, "injectedRules", (v) => Array.isArray(v) && v.every(isString), "a list of strings"),
  session_init: () => undefined,
  mode_change: (e) => requireField(e, "mode", isString, "a string"),
  // pi ≥ 0.87
  context_edit: (e) =>
    requireField(e, "targetId", isString, "a string") ??
    requireField(e, "replacement", (v) => v === null || (isObject(v) && "content" in v), "null or an object with `content`"),
  usage: () => undefined,
  // oh-my-pi 18
  reset_boundary: () => undefined,
  title_change: () => undefined,
  model_usage: () => undefined,
  service_tier_change: () => undefined,
  credential_pin: () => undefined,
};

export function isKnownEntryType(type: string): boolean {
  return Object.hasOwn(ENTRY_CHECKS, type);
}

export function validateHeader(value: unknown): string | undefined {
  if (!isObject(value)) return "the first line is not a JSON object";
  const foreign = value.type === "session" ? undefined : foreignSessionFormat(value);
  if (foreign) return foreignSessionMessage(foreign);
  if (value.type !== "session") return "the first line is not a session header (`type` must be \"session\")";
  if (!isString(value.id)) return "the session header has no string `id`";
  return optionalField(value, "version", isNumber, "a number");
}

export function isHeader(value: unknown): value is SessionHeader {
  return isObject(value) && value.type === "session";
}

/**
 * How deep arrays and objects may nest in one entry. JSON.parse reads any depth, but
 * JSON.stringify and structuredClone recurse and overflow the call stack at a few thousand levels
 * (token estimates, previews, summarizer input, rewrites all stringify), so a deeper line would
 * break every command with an error that names no line. Real entries nest a few dozen levels.
 */
export const MAX_NESTING = 1000;

/** Below this depth the walk recurses (fast, no allocation); deeper, it goes on with an explicit stack. */
const RECURSION_DEPTH = 64;

/**
 * Whether arrays and objects nest more than `limit` levels in `value`; stops early. It runs on
 * every entry read, so the shallow common case recurses without allocating, and only a value
 * deeper than RECURSION_DEPTH continues on an explicit stack, which no input can overflow.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  return typeof value === "object" && value !== null && deeper(value, 0, limit);
}

function deeper(value: object, depth: number, limit: number): boolean {
  if (depth >= limit) return true;
  if (depth >= RECURSION_DEPTH) return deeperOnStack(value, depth, limit);
  if (Array.isArray(value)) {
    for (const child of value) if (typeof child === "object" && child !== null && deeper(child, depth + 1, limit)) return true;
    return false;
  }
  for (const key in value) {
    const child = (value as Record<string, unknown>)[key];
    if (typeof child === "object" && child !== null && deeper(child, depth + 1, limit)) return true;
  }
  return false;
}

function deeperOnStack(value: object, depth: number, limit: number): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [depth];
  while (values.length > 0) {
    const current = values.pop();
    const at = depths.pop()!;
    if (typeof current !== "object" || current === null) continue;
    if (at >= limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === "object" && child !== null) {
        values.push(child);
        depths.push(at + 1);
      }
    }
  }
  return false;
}

/**
 * Checks an entry of a v2/v3 file. `requireTreeFields` is false for v1 files, whose entries get
 * their ids during migration.
 */
export function validateEntry(value: unknown, requireTreeFields = true): string | undefined {
  if (!isObject(value)) return "not a JSON object";
  if (!isString(value.type)) return "field `type` must be a string";
  if (requireTreeFields) {
    if (!isString(value.id) || value.id.length === 0) return "field `id` must be a non-empty string";
    if (value.parentId !== null && !isString(value.parentId)) return "field `parentId` must be a string or null";
  }
  const problem = optionalField(value, "timestamp", isString, "an ISO time string");
  if (problem) return problem;
  const check = ENTRY_CHECKS[value.type];
  const fieldProblem = check ? check(value) : undefined;
  if (fieldProblem) return fieldProblem;
  return nestsDeeperThan(value, MAX_NESTING) ? `arrays or objects nested more than ${MAX_NESTING} levels deep` : undefined;
}

export type { SessionEntry };
