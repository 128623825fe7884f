/**
 * The real pi (`@mariozechner/pi-coding-agent`, the exact devDependency) in-process through its
 * SDK, with a package loaded as pi loads installed packages: listed in the agent directory's
 * settings.json `packages`, resolved by pi's DefaultResourceLoader from the package's
 * `pi.extensions` manifest. The model is the scripted OpenAI-compatible server of sse-server.ts;
 * HOME points into the temp folder, so neither pi's nor bonsai's user settings are read.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentSession as PiAgentSession } from "@mariozechner/pi-coding-agent";
import type { Api, Model } from "@mariozechner/pi-ai";

/**
 * The pi these tests run: the devDependency (pi 0.73.1), or the package folder named by
 * BONSAI_TEST_PI_PACKAGE (the oracle suite runs them again with pi 1.6.0, on Node 22). Its API
 * is the same for what these tests use.
 */
export const PI_PACKAGE = process.env.BONSAI_TEST_PI_PACKAGE || "@mariozechner/pi-coding-agent";
export const pi: typeof import("@mariozechner/pi-coding-agent") = await import(PI_PACKAGE.startsWith("/") ? `${PI_PACKAGE}/dist/index.js` : PI_PACKAGE);
const { createAgentSession, DefaultResourceLoader, SessionManager: PiSessionManager, SettingsManager } = pi;

export interface PiAgentOptions {
  /** the temp folder: agent dir, project and HOME live under it */
  root: string;
  baseUrl: string;
  /** the package folder to load (its package.json has `pi.extensions`); none: plain pi */
  packageDir?: string;
  contextWindow?: number;
  /** pi's compaction settings */
  compaction?: { enabled?: boolean; reserveTokens?: number; keepRecentTokens?: number };
  /** written to <project>/.bonsai/settings.json */
  bonsaiSettings?: object;
  /** a second provider, `cheap`, with one model `mini` on the same server (for compaction.model) */
  cheapModel?: boolean;
  /** pi's tools to enable (default none) */
  tools?: string[];
  /** an existing session file to open; default: a new one in the project's session dir */
  sessionFile?: string;
}

export interface PiAgent {
  /** errors pi caught from the extension's handlers (pi then goes on without it, silently) */
  extensionErrors: string[];
  session: PiAgentSession;
  cwd: string;
  sessionFile: string;
  model: Model<Api>;
  dispose(): void;
}

export function scriptedModel(baseUrl: string, contextWindow: number): Model<"openai-completions"> {
  return {
    id: "scripted",
    name: "scripted",
    api: "openai-completions",
    provider: "scripted",
    baseUrl,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow,
    maxTokens: 2000,
    compat: { supportsStore: false, supportsDeveloperRole: false, supportsReasoningEffort: false, supportsUsageInStreaming: true },
  } as Model<"openai-completions">;
}

/**
 * The scripted model (and the cheap one) registered with pi: pi 0.x through its AuthStorage and
 * ModelRegistry, pi 1.x through its ModelRuntime (auth and models in files under the agent folder).
 */
async function scriptedModels(options: PiAgentOptions, agentDir: string): Promise<{ models: Record<string, unknown>; model: Model<Api> }> {
  const shaped = (id: string, contextWindow: number) => {
    const { id: _id, name: _name, provider: _provider, ...shape } = scriptedModel(options.baseUrl, contextWindow);
    return { ...shape, id, name: id };
  };
  const runtimeClass = (pi as unknown as { ModelRuntime?: { create(o: object): Promise<PiModelRuntime> } }).ModelRuntime;
  if (runtimeClass) {
    const runtime = await runtimeClass.create({ authPath: join(agentDir, "auth.json"), modelsPath: join(agentDir, "models.json"), allowModelNetwork: false, refreshOnCreate: false });
    runtime.registerProvider("scripted", { baseUrl: options.baseUrl, apiKey: "test-key", api: "openai-completions", models: [shaped("scripted", options.contextWindow ?? 8000)] });
    if (options.cheapModel) runtime.registerProvider("cheap", { baseUrl: options.baseUrl, apiKey: "cheap-key", api: "openai-completions", models: [shaped("mini", 8000)] });
    const model = runtime.getModel("scripted", "scripted");
    if (!model) throw new Error("pi did not register the scripted model");
    return { models: { modelRuntime: runtime }, model };
  }
  const authStorage = pi.AuthStorage.inMemory();
  authStorage.setRuntimeApiKey("scripted", "test-key");
  const modelRegistry = pi.ModelRegistry.inMemory(authStorage);
  if (options.cheapModel) modelRegistry.registerProvider("cheap", { baseUrl: options.baseUrl, apiKey: "cheap-key", api: "openai-completions", models: [shaped("mini", 8000)] });
  return { models: { authStorage, modelRegistry }, model: scriptedModel(options.baseUrl, options.contextWindow ?? 8000) };
}

interface PiModelRuntime {
  registerProvider(id: string, config: object): void;
  getModel(provider: string, id: string): Model<Api> | undefined;
}

export async function startPiAgent(options: PiAgentOptions): Promise<PiAgent> {
  const agentDir = join(options.root, "agent");
  const cwd = join(options.root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(join(cwd, ".bonsai"), { recursive: true });
  process.env.HOME = join(options.root, "home");
  mkdirSync(process.env.HOME, { recursive: true });
  const piSettings = {
    ...(options.packageDir ? { packages: [options.packageDir] } : {}),
    compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 800, ...options.compaction },
    retry: { enabled: false },
  };
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify(piSettings));
  writeFileSync(join(cwd, ".bonsai", "settings.json"), JSON.stringify(options.bonsaiSettings ?? {}));

  const { models, model } = await scriptedModels(options, agentDir);
  const settingsManager = SettingsManager.create(cwd, agentDir);
  const resourceLoader = new DefaultResourceLoader({ cwd, agentDir, settingsManager, noSkills: true, noPromptTemplates: true, noThemes: true, noContextFiles: true });
  await resourceLoader.reload();
  const problems = resourceLoader.getExtensions().errors ?? [];
  if (problems.length > 0) throw new Error(`pi could not load the extension: ${JSON.stringify(problems)}`);
  const sessionManager = options.sessionFile ? PiSessionManager.open(options.sessionFile) : PiSessionManager.create(cwd, join(cwd, "sessions"));
  const { session } = await createAgentSession({
    cwd,
    agentDir,
    ...models,
    model,
    thinkingLevel: "off",
    tools: options.tools ?? [],
    resourceLoader,
    sessionManager,
    settingsManager,
  });
  const extensionErrors: string[] = [];
  await session.bindExtensions({ onError: (e: { event?: string; error: string; stack?: string }) => extensionErrors.push(`${e.event ?? "?"}: ${e.stack ?? e.error}`) });
  return {
    session,
    extensionErrors,
    cwd,
    get sessionFile() {
      return session.sessionFile as string;
    },
    model,
    dispose: () => session.dispose(),
  };
}
