/**
 * The settings a command runs with, read the way `bonsai chat` reads them (config/settings.ts
 * loadSettings: `~/.bonsai/settings.json`, then `<cwd>/.bonsai/settings.json`) and the BONSAI_*
 * environment (config/environment.ts), with the command's flags winning. A malformed settings
 * file is a one-line CLI error naming the file and key.
 */
import { configuredSummarizer } from "../config/environment.js";
import { loadSettings, type Settings, SettingsError } from "../config/settings.js";
import { CliError, warn } from "./output.js";
import type { SummarizerOptionValues } from "./summarizer-options.js";

export function loadCommandSettings(options: { cwd?: string; onWarning?: (message: string) => void } = {}): Settings {
  try {
    return loadSettings({ cwd: options.cwd ?? process.cwd(), onWarning: options.onWarning ?? warn });
  } catch (error) {
    if (error instanceof SettingsError) throw new CliError(error.message);
    throw error;
  }
}

/** The summarizer flags with the settings' and the environment's summarizer filled in when no flag names one. */
export function summarizerOptionsWithSettings<T extends SummarizerOptionValues>(
  options: T,
  settings: Settings,
  env: NodeJS.ProcessEnv = process.env,
): T {
  const chosen = configuredSummarizer(options, settings, env);
  if (chosen.origin === "flags" || chosen.origin === "none") return options;
  const { origin: _origin, ...source } = chosen;
  return { ...options, ...source };
}

/** keepRecentTokens and reserveTokens: the flag, else the settings file's value. */
export function compactionBudget(
  flags: { keepRecent?: number; reserve?: number },
  settings: Settings,
): { keepRecentTokens: number; reserveTokens: number; pinFirstRequest: boolean } {
  return {
    keepRecentTokens: flags.keepRecent ?? settings.compaction.keepRecentTokens,
    reserveTokens: flags.reserve ?? settings.compaction.reserveTokens,
    pinFirstRequest: settings.compaction.pinFirstRequest,
  };
}
