/**
 * pi-ai's table of models alone, for what only reads it (a model's context window for the session
 * page): the package's entry loads every provider's SDK (about 300 ms of CPU), its table about 20.
 * The table's module is found next to the package's entry, since the package's exports do not name
 * it; when that fails (another layout), the entry is loaded as before.
 */
export type ModelLookup = (provider: string, modelId: string) => { contextWindow?: number } | undefined;

let loaded: Promise<ModelLookup> | undefined;

async function load(): Promise<ModelLookup> {
  try {
    const table = (await import(new URL("./models.js", import.meta.resolve("@mariozechner/pi-ai")).href)) as { getModel?: unknown };
    if (typeof table.getModel === "function") return table.getModel as ModelLookup;
  } catch {
    // not where this version keeps it: the whole package below
  }
  const piAi = await import("@mariozechner/pi-ai");
  return piAi.getModel as unknown as ModelLookup;
}

/** pi-ai's `getModel`, loaded once, from its table when it can be. */
export function modelLookup(): Promise<ModelLookup> {
  loaded ??= load();
  return loaded;
}
