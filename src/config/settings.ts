/**
 * Settings for compaction, branch summaries and retries: defaults, validation with errors that
 * name the file and key, and the two-level merge (user file, then project file; project wins).
 * Only `loadSettings` touches the disk; everything else is pure.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, relative, sep } from "node:path";
import { DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS } from "../compaction/branch-summary.js";
import { type CompactionSettings as CoreCompactionSettings, DEFAULT_COMPACTION_SETTINGS } from "../compaction/settings.js";
import { nestsDeeperThan } from "../format/validate.js";

/**
 * The compaction core's settings plus what an agent session needs. Here `enabled` gates automatic
 * compaction and tool-output pruning, and `reserveTokens` is also the threshold margin: compact
 * when the context passes window - reserveTokens.
 */
export interface CompactionSettings extends CoreCompactionSettings {
  /** after a threshold compaction, nudge the agent to continue pending work */
  autoContinue: boolean;
  /** a summarization endpoint (POST {systemPrompt, prompt} -> {summary}) used instead of the model */
  remoteEndpoint?: string;
  /** further models for automatic compaction, as "provider/id", tried after the current model */
  models: string[];
  /** compact when the context passes this percentage of the window (1–100); the lowest threshold wins */
  thresholdPercent?: number;
  /** compact when the context passes this many tokens; the lowest threshold wins */
  thresholdTokens?: number;
  /** start a summary in the background at this percentage of the threshold (0 turns it off) */
  backgroundPercent: number;
  /** compact inside a turn, between tool calls, when the context passes the threshold */
  midTurn: boolean;
  /** pin the session's first user message: every compaction quotes it verbatim */
  pinFirstRequest: boolean;
  /** the model tried first for automatic compaction, as "provider/id" (usually a cheaper one) */
  model?: string;
  /** how a summary is made, in order; each that fails or is refused hands over to the next */
  methods: CompactionMethod[];
}

/** native: the provider's own compaction for the session's model, where a lane speaks its API (summarizer/native-lanes.ts); remote: the endpoint of `remoteEndpoint`; model: compaction.model, the current model, compaction.models; extractive: offline. */
export type CompactionMethod = "native" | "remote" | "model" | "extractive";

export const COMPACTION_METHODS: readonly CompactionMethod[] = Object.freeze(["native", "remote", "model", "extractive"]);

/** Tool output taken out of the context before any summary is made (docs/ARCHITECTURE.md, pruning). */
export interface PruningSettings {
  /** a tool result over this many estimated tokens is cut to its head and tail (0 turns it off) */
  maxResultTokens: number;
  /** a read superseded by a later read or write of the same file becomes a notice */
  supersededReads: boolean;
}

export interface BranchSummarySettings {
  /** whether interactive front ends offer to summarize an abandoned branch */
  enabled: boolean;
  /** branch summary budget = context window (or 128000) - reserveTokens */
  reserveTokens: number;
}

export interface RetrySettings {
  enabled: boolean;
  maxRetries: number;
  baseDelayMs: number;
}

export interface Settings {
  compaction: CompactionSettings;
  branchSummary: BranchSummarySettings;
  retry: RetrySettings;
  pruning: PruningSettings;
}

/** Each section optional, each key optional: what a settings file or an override holds. */
export type SettingsInput = { [S in keyof Settings]?: Partial<Settings[S]> };

export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({
  compaction: Object.freeze({
    ...DEFAULT_COMPACTION_SETTINGS,
    autoContinue: true,
    models: [] as string[],
    backgroundPercent: 80,
    midTurn: true,
    pinFirstRequest: false,
    methods: [...COMPACTION_METHODS],
  }),
  branchSummary: Object.freeze({ enabled: false, reserveTokens: DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS }),
  retry: Object.freeze({ enabled: true, maxRetries: 3, baseDelayMs: 2000 }),
  pruning: Object.freeze({ maxResultTokens: 8000, supersededReads: true }),
}) as Readonly<Settings>;

// ---------------------------------------------------------------- schema

/** A check of one value; the settings are few and flat, so plain predicates serve (no schema library to load). */
type Check = (value: unknown) => boolean;

const isBoolean: Check = (value) => typeof value === "boolean";
const isPositiveInt: Check = (value) => Number.isSafeInteger(value) && (value as number) > 0;
const isNonNegativeInt: Check = (value) => Number.isSafeInteger(value) && (value as number) >= 0;
const isHttpUrl: Check = (value) => {
  if (typeof value !== "string") return false;
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
};
const isModelRef: Check = (value) => typeof value === "string" && /^[^/\s]+\/\S+$/.test(value);
const isModelList: Check = (value) => Array.isArray(value) && value.every(isModelRef);
const isPercent: Check = (value) => typeof value === "number" && Number.isFinite(value) && value > 0 && value <= 100;
const isBackgroundPercent: Check = (value) => typeof value === "number" && Number.isFinite(value) && value >= 0 && value < 100;
const isMethodList: Check = (value) =>
  Array.isArray(value) &&
  value.length > 0 &&
  new Set(value).size === value.length &&
  value.every((m) => (COMPACTION_METHODS as readonly unknown[]).includes(m));

/** A key's check, and the words an error uses for it ("expected <words>, got …"). */
type Rule = readonly [Check, string];
const BOOLEAN: Rule = [isBoolean, "true or false"];
const POSITIVE_INT: Rule = [isPositiveInt, "a positive integer"];
const nonNegativeInt = (note = ""): Rule => [isNonNegativeInt, `a non-negative integer${note}`];
const MODEL_REF: Rule = [isModelRef, 'a "provider/model-id" string'];

const KEYS = {
  compaction: {
    enabled: BOOLEAN,
    reserveTokens: POSITIVE_INT,
    keepRecentTokens: POSITIVE_INT,
    autoContinue: BOOLEAN,
    remoteEndpoint: [isHttpUrl, "an http(s) URL"],
    models: [isModelList, 'a list of "provider/model-id" strings'],
    thresholdPercent: [isPercent, "a percentage above 0 and at most 100"],
    thresholdTokens: POSITIVE_INT,
    backgroundPercent: [isBackgroundPercent, "a percentage from 0 (off) to below 100"],
    midTurn: BOOLEAN,
    pinFirstRequest: BOOLEAN,
    model: MODEL_REF,
    methods: [isMethodList, 'a non-empty list of distinct methods from "native", "remote", "model", "extractive"'],
  },
  branchSummary: { enabled: BOOLEAN, reserveTokens: POSITIVE_INT },
  retry: { enabled: BOOLEAN, maxRetries: nonNegativeInt(), baseDelayMs: nonNegativeInt(" (milliseconds)") },
  pruning: { maxResultTokens: nonNegativeInt(" (0 turns it off)"), supersededReads: BOOLEAN },
} as const satisfies Record<keyof Settings, Record<string, Rule>>;

type Section = keyof typeof KEYS;

export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SettingsError";
  }
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  // a value nested deeper than JSON.stringify can recurse is described by its kind alone
  if (typeof value === "object" && value !== null && nestsDeeperThan(value, 100)) return Array.isArray(value) ? "a deeply nested list" : "a deeply nested object";
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Validates one settings object. `source` names where it came from and prefixes every message.
 * Unknown sections and keys are reported through `onWarning` and dropped; a wrong value throws.
 */
export function parseSettings(
  value: unknown,
  source: string,
  onWarning: (message: string) => void = () => {},
): SettingsInput {
  if (!isPlainObject(value)) throw new SettingsError(`${source}: expected a JSON object, got ${describe(value)}`);
  const result: SettingsInput = {};
  for (const [sectionName, sectionValue] of Object.entries(value)) {
    if (!Object.hasOwn(KEYS, sectionName)) {
      onWarning(`${source}: unknown setting "${sectionName}" ignored`);
      continue;
    }
    const section = sectionName as Section;
    if (!isPlainObject(sectionValue)) {
      throw new SettingsError(`${source}: ${section}: expected an object, got ${describe(sectionValue)}`);
    }
    const keys = KEYS[section] as Record<string, readonly [Check, string]>;
    const parsed: Record<string, unknown> = {};
    for (const [key, keyValue] of Object.entries(sectionValue)) {
      // own keys only: "constructor", "toString" or "__proto__" are not settings
      const rule = Object.hasOwn(keys, key) ? keys[key] : undefined;
      if (!rule) {
        onWarning(`${source}: unknown setting "${section}.${key}" ignored`);
        continue;
      }
      const [check, expected] = rule;
      if (!check(keyValue)) {
        throw new SettingsError(`${source}: ${section}.${key}: expected ${expected}, got ${describe(keyValue)}`);
      }
      parsed[key] = Array.isArray(keyValue) ? [...keyValue] : keyValue;
    }
    (result as Record<string, unknown>)[section] = parsed;
  }
  return result;
}

/** Later layers win key by key within each section; lists are replaced, not concatenated. */
export function mergeSettings(base: Settings, ...layers: (SettingsInput | undefined)[]): Settings {
  const merged: Settings = {
    compaction: { ...base.compaction, models: [...base.compaction.models], methods: [...base.compaction.methods] },
    branchSummary: { ...base.branchSummary },
    retry: { ...base.retry },
    pruning: { ...base.pruning },
  };
  for (const layer of layers) {
    if (!layer) continue;
    for (const section of Object.keys(KEYS) as Section[]) {
      const values = layer[section];
      if (!values) continue;
      for (const [key, value] of Object.entries(values)) {
        if (value !== undefined) (merged[section] as unknown as Record<string, unknown>)[key] = value;
      }
    }
  }
  return merged;
}

/** Defaults with `overrides` applied; overrides are validated like a settings file. */
export function resolveSettings(overrides?: SettingsInput, source = "settings"): Settings {
  if (!overrides) return mergeSettings(DEFAULT_SETTINGS as Settings);
  return mergeSettings(DEFAULT_SETTINGS as Settings, parseSettings(overrides, source));
}

// ---------------------------------------------------------------- files

export interface LoadSettingsOptions {
  /** home directory (default: the user's); the user file is `<home>/.bonsai/settings.json` */
  home?: string;
  /** project directory (default: process.cwd()); the project file is `<cwd>/.bonsai/settings.json` */
  cwd?: string;
  /** hears unknown keys (default: printed to stderr) */
  onWarning?: (message: string) => void;
}

export function settingsPaths(options: { home?: string; cwd?: string } = {}): { user: string; project: string } {
  const home = options.home ?? homedir();
  const cwd = options.cwd ?? process.cwd();
  return { user: join(home, ".bonsai", "settings.json"), project: join(cwd, ".bonsai", "settings.json") };
}

/** `~/…` for paths under the home directory, so messages stay short and familiar. */
function displayPath(path: string, home: string): string {
  const rel = relative(home, path);
  return rel && !rel.startsWith("..") && !rel.startsWith(sep) ? `~/${rel.split(sep).join("/")}` : path;
}

/** More than any settings file needs: a larger one is refused before it is read. */
const MAX_SETTINGS_BYTES = 1 << 20;

function readSettingsFile(path: string, shown: string, onWarning: (message: string) => void): SettingsInput | undefined {
  let text: string;
  try {
    // a FIFO or a link to a device (a cloned repository can ship one) would block or never end
    const stat = statSync(path);
    if (!stat.isFile()) throw new SettingsError(`${shown}: not a regular file; settings are read only from a file`);
    if (stat.size > MAX_SETTINGS_BYTES) throw new SettingsError(`${shown}: ${stat.size} bytes, more than a settings file holds (at most ${MAX_SETTINGS_BYTES})`);
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof SettingsError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw new SettingsError(`${shown}: cannot read (${code ?? (error as Error).message})`);
  }
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SettingsError(`${shown}: invalid JSON (${(error as Error).message}); fix or remove the file`);
  }
  return parseSettings(value, shown, onWarning);
}

/**
 * Defaults, then `~/.bonsai/settings.json`, then `<cwd>/.bonsai/settings.json`. Missing files are
 * fine; a malformed one throws a SettingsError naming the file and key.
 */
export function loadSettings(options: LoadSettingsOptions = {}): Settings {
  return mergeSettings(DEFAULT_SETTINGS as Settings, ...settingsLayers(options).map((l) => l.input));
}

/** The settings files in the order they apply (later wins), each as read: undefined when it is not there. */
function settingsLayers(options: LoadSettingsOptions): { path: string; shown: string; input: SettingsInput | undefined }[] {
  const home = options.home ?? homedir();
  const onWarning = options.onWarning ?? ((message: string) => console.warn(`bonsai: ${message}`));
  const paths = settingsPaths({ home, cwd: options.cwd });
  const files = paths.project === paths.user ? [paths.user] : [paths.user, paths.project];
  return files.map((path) => {
    const shown = displayPath(path, home);
    return { path, shown, input: readSettingsFile(path, shown, onWarning) };
  });
}

/** One setting as it takes effect: its value, and where that came from. */
export interface EffectiveSetting {
  /** `section.key` */
  key: string;
  value: unknown;
  /** "default", or the settings file that set it (as messages show it: `~/…` under home) */
  source: string;
}

export interface EffectiveSettings {
  settings: Settings;
  /** every key, in the order of the sections and their keys */
  values: EffectiveSetting[];
  /** the files read, in order (later wins), and whether each was there */
  files: { path: string; exists: boolean }[];
}

/** The settings loadSettings gives, with the source of each key: what `bonsai settings` shows. */
export function effectiveSettings(options: LoadSettingsOptions = {}): EffectiveSettings {
  const layers = settingsLayers(options);
  const settings = mergeSettings(DEFAULT_SETTINGS as Settings, ...layers.map((l) => l.input));
  const values: EffectiveSetting[] = [];
  for (const section of Object.keys(KEYS) as Section[]) {
    for (const key of Object.keys(KEYS[section])) {
      const from = [...layers].reverse().find((l) => (l.input?.[section] as Record<string, unknown> | undefined)?.[key] !== undefined);
      values.push({ key: `${section}.${key}`, value: (settings[section] as unknown as Record<string, unknown>)[key], source: from?.shown ?? "default" });
    }
  }
  return { settings, values, files: layers.map((l) => ({ path: l.shown, exists: existsSync(l.path) })) };
}
