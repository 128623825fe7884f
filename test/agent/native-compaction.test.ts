/**
 * The native compaction lanes, one contract run against each provider's scripted server (the
 * documented wire format, requests asserted field by field): a threshold compaction goes through
 * the lane, the entry holds the opaque payload and a readable summary, the next request replays the
 * payload to the same model and sends the readable summary to another, pi opens the file with the
 * readable summary, a native failure falls back to the next method once, and `details.native`
 * reports the cache-read share and the net cost.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Api, Model } from "@mariozechner/pi-ai";
import { AgentSession } from "../../src/agent/agent-session.js";
import type { AgentSessionEvent } from "../../src/agent/events.js";
import type { CompactionEntry } from "../../src/format/entry-types.js";
import { COMPACTION_SUMMARY_INTRO } from "../../src/messages/convert.js";
import { REPLAY_NOTES_INTRO } from "../../src/summarizer/native-anthropic.js";
import { SessionManager } from "../../src/session/manager.js";
import { bigText, scriptedSummarizer } from "../helpers/agent-harness.js";
import { type ProviderReply, type ProviderServer, type RecordedRequest, startAnthropicServer, startResponsesServer } from "../helpers/provider-servers.js";
import { assistantMsg, tempDir, userMsg } from "../helpers/session-builders.js";

interface LaneCase {
  name: string;
  start: (respond: (request: RecordedRequest) => ProviderReply) => Promise<ProviderServer>;
  model: (baseUrl: string, id: string) => Model<Api>;
  ids: [string, string];
  isCompaction: (request: RecordedRequest) => boolean;
  /** the provider's compaction answer: billed 2,000 fresh, 60,000 cached, 1,000 written, 900 out */
  compacted: ProviderReply;
  /** the stored payload the answer carries */
  payload: unknown;
  /** the provider's own readable text, if it writes one */
  providerText?: string;
  expectedShare: number;
  expectedWritten: number;
  /** the compaction request, checked field by field against the live request before it */
  checkRequest: (request: RecordedRequest, live: RecordedRequest) => void;
  /** the stored payload in a live request, where the summary message was */
  replays: (request: RecordedRequest) => boolean;
  /** the context after the first compaction is still large enough for the lane: the second compaction goes through it too */
  chains: boolean;
  /** the provider's error when it refuses a replayed payload */
  refusedWith: string;
  /** a replaying request against the live request before the compaction */
  checkReplay?: (replayed: RecordedRequest, live: RecordedRequest, summary: string) => void;
  /** the readable summary as a user message in a live request */
  reads: (request: RecordedRequest) => boolean;
}

const COMPACTION_TEXT = "## Goal\nShip the parser (native summary).\n\n## Next Steps\n1. Wire the CLI.";
const anthropicBlock = { type: "compaction", content: COMPACTION_TEXT };
const openAiItems = [
  { type: "message", role: "user", content: [{ type: "input_text", text: "request 0" }] },
  { type: "compaction", id: "cmp_1", encrypted_content: "gAAAA-opaque-state" },
];

const text = (content: unknown) =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((b) => (b as { text?: string }).text ?? "").join("") : "";
const messagesOf = (request: RecordedRequest) => (request.body.messages ?? request.body.input) as { role?: string; type?: string; content?: unknown }[];
const readsSummary = (request: RecordedRequest) => messagesOf(request).some((m) => m.role === "user" && text(m.content).startsWith(COMPACTION_SUMMARY_INTRO));

const model = (api: Api, provider: string, headers?: Record<string, string>) => (baseUrl: string, id: string): Model<Api> => ({
  id,
  name: id,
  api,
  provider,
  baseUrl,
  ...(headers ? { headers } : {}),
  reasoning: true,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 200_000,
  maxTokens: 8192,
});

const LANES: LaneCase[] = [
  {
    name: "Anthropic server-side compaction",
    start: startAnthropicServer,
    // a model that compacts, with a beta of its own in its headers (pi-ai sends those instead of its defaults)
    model: model("anthropic-messages", "anthropic", { "anthropic-beta": "context-1m-2025-08-07" }),
    ids: ["claude-sonnet-4-6", "claude-opus-4-6"],
    isCompaction: (r) => r.body.stream === false,
    compacted: {
      json: {
        id: "msg_c",
        type: "message",
        role: "assistant",
        content: [anthropicBlock],
        stop_reason: "compaction",
        usage: {
          input_tokens: 10,
          output_tokens: 0,
          iterations: [{ type: "compaction", input_tokens: 2000, cache_read_input_tokens: 60_000, cache_creation_input_tokens: 1000, output_tokens: 900 }],
        },
      },
    },
    payload: anthropicBlock,
    chains: false,
    refusedWith: "messages.0.content.0: Input tag 'compaction' found using 'type' does not match any of the expected tags",
    providerText: COMPACTION_TEXT,
    expectedShare: Math.round((60_000 / 63_000) * 1000) / 1000,
    expectedWritten: 1900,
    checkRequest(request, live) {
      assert.equal(request.path, "/v1/messages");
      assert.equal(request.headers["x-api-key"], "test-key");
      assert.equal(request.headers["anthropic-version"], "2023-06-01");
      assert.equal(request.headers["anthropic-beta"], "context-1m-2025-08-07,compact-2026-01-12");
      const edits = (request.body.context_management as { edits: Record<string, unknown>[] }).edits;
      assert.equal(edits.length, 1);
      const { instructions, ...edit } = edits[0];
      assert.deepEqual(edit, { type: "compact_20260112", trigger: { type: "input_tokens", value: 50_000 }, pause_after_compaction: true });
      assert.match(String(instructions), /## Goal[\s\S]*## Next Steps/);
      // the live request's prefix, so the provider reads what it cached
      assert.deepEqual(request.body.system, live.body.system);
      assert.equal(request.body.model, live.body.model);
      // the same thinking as the live request (a change of thinking invalidates Anthropic's cached messages)
      assert.ok(live.body.thinking !== undefined);
      assert.deepEqual(request.body.thinking, live.body.thinking);
      // the models that compact refuse a prefilled answer: the request ends with the user's turn
      const last = (request.body.messages as { role: string }[]).at(-1);
      assert.equal(last?.role, "user");
      // the span's messages are the live request's first messages, as sent (pi-ai marks only the last for caching)
      const plain = (messages: unknown) => JSON.parse(JSON.stringify(messages).replace(/,"cache_control":\{"type":"ephemeral"\}/g, ""));
      const span = (request.body.messages as unknown[]).slice(0, -1);
      assert.ok(span.length >= 10 && span.length < (live.body.messages as unknown[]).length);
      assert.deepEqual(plain(span), plain((live.body.messages as unknown[]).slice(0, span.length)));
    },
    replays: (r) => {
      const first = messagesOf(r)[0];
      const edits = (r.body.context_management as { edits?: { type: string; trigger?: { value: number } }[] } | undefined)?.edits ?? [];
      const beta = String(r.headers["anthropic-beta"] ?? "").split(",");
      return (
        first?.role === "assistant" &&
        JSON.stringify((first.content as unknown[])[0]) === JSON.stringify(anthropicBlock) &&
        edits.some((e) => e.type === "compact_20260112" && (e.trigger?.value ?? 0) >= 200_000) &&
        beta.includes("compact-2026-01-12")
      );
    },
    reads: (r) => readsSummary(r) && r.body.context_management === undefined,
    checkReplay(replayed, live, summary) {
      // what bonsai's readable summary adds to the provider's (the verbatim requests here) goes with the block
      const notes = summary.slice(COMPACTION_TEXT.length).trim();
      assert.ok(notes.startsWith("## User requests") && notes.includes("> request 6 "), notes.slice(0, 100));
      const second = messagesOf(replayed)[1];
      assert.equal(second.role, "user");
      assert.ok(text(second.content).startsWith(REPLAY_NOTES_INTRO) && text(second.content).endsWith(notes));
      // the betas pi-ai sends on its own stay, with the compaction beta added
      const betas = (r: RecordedRequest) => String(r.headers["anthropic-beta"] ?? "").split(",").filter(Boolean);
      assert.ok(betas(live).length > 0, "pi-ai sends a beta of its own for this model");
      assert.deepEqual(betas(replayed), [...betas(live), "compact-2026-01-12"]);
      assert.deepEqual(replayed.body.system, live.body.system);
    },
  },
  {
    name: "OpenAI Responses compaction",
    start: startResponsesServer,
    model: model("openai-responses", "openai"),
    ids: ["gpt-5.1", "gpt-5-mini"],
    isCompaction: (r) => r.path === "/v1/responses/compact",
    compacted: {
      json: {
        id: "resp_c",
        object: "response.compaction",
        output: openAiItems,
        usage: { input_tokens: 62_000, input_tokens_details: { cached_tokens: 60_000 }, output_tokens: 700, total_tokens: 62_700 },
      },
    },
    payload: openAiItems,
    chains: true,
    // OpenAI's message; the code invalid_encrypted_content travels in another field, which pi-ai leaves out
    refusedWith: "The encrypted content for item cmp_1 could not be verified. Reason: Encrypted content could not be decrypted or parsed.",
    expectedShare: Math.round((60_000 / 62_000) * 1000) / 1000,
    expectedWritten: 700,
    checkRequest(request, live) {
      assert.equal(request.headers.authorization, "Bearer test-key");
      assert.deepEqual(Object.keys(request.body).sort(), ["input", "model", "prompt_cache_key"]);
      assert.equal(request.body.model, live.body.model);
      // the session's cache key and the live request's prefix: its system message and the span, as sent
      assert.equal(request.body.prompt_cache_key, "session-1");
      assert.equal(live.body.prompt_cache_key, "session-1");
      const input = request.body.input as unknown[];
      const liveInput = live.body.input as unknown[];
      assert.ok(input.length >= 10 && input.length < liveInput.length);
      assert.deepEqual(input, liveInput.slice(0, input.length));
    },
    replays: (r) => {
      const input = messagesOf(r);
      return input.some((i) => i.type === "compaction" && JSON.stringify(i) === JSON.stringify(openAiItems[1])) && !readsSummary(r);
    },
    reads: (r) => readsSummary(r) && !messagesOf(r).some((i) => i.type === "compaction"),
  },
];

/** A session whose history is about 96,000 estimated tokens, eight turns of 12,000. */
function longSession(dir: string): SessionManager {
  const manager = SessionManager.create("/project", dir);
  for (let i = 0; i < 8; i++) {
    manager.appendMessage(userMsg(bigText(`request ${i}`, 6000)));
    manager.appendMessage(assistantMsg(bigText(`answer ${i}`, 6000)));
  }
  return manager;
}

for (const lane of LANES) {
  describe(`native lane: ${lane.name}`, () => {
    let server: ProviderServer;
    let compactionReply: ProviderReply = lane.compacted;
    let refuseReplay = false;
    /** the usage the next live answers report (then 190,000: past the threshold) */
    let liveTokens: number[] = [];
    const dirs: (() => void)[] = [];
    before(async () => {
      server = await lane.start((request) => {
        if (lane.isCompaction(request)) return compactionReply;
        if (refuseReplay && lane.replays(request)) return { status: 400, message: lane.refusedWith };
        return { text: "ok", inputTokens: liveTokens.shift() ?? 190_000 };
      });
    });
    after(async () => {
      await server.close();
      for (const cleanup of dirs) cleanup();
    });

    async function session(backgroundPercent = 0) {
      const { dir, cleanup } = tempDir();
      dirs.push(cleanup);
      const manager = longSession(dir);
      const readable = scriptedSummarizer();
      const events: AgentSessionEvent[] = [];
      const models = lane.ids.map((id) => lane.model(server.baseUrl, id));
      const agent = await AgentSession.create({
        sessionManager: manager,
        model: models[0],
        systemPrompt: "You are terse.",
        thinkingLevel: "medium",
        getApiKey: () => "test-key",
        createSummarizer: () => readable,
        resolveModel: (_provider, id) => models.find((m) => m.id === id),
        settings: { compaction: { backgroundPercent }, retry: { baseDelayMs: 1 } },
        prune: false,
        // the id that keys the provider's prompt cache (OpenAI's prompt_cache_key)
        agentOptions: { sessionId: "session-1" },
      });
      agent.subscribe((event) => events.push(event));
      return { manager, agent, readable, events, models };
    }

    const compactions = (manager: SessionManager) => manager.getEntries().filter((e): e is CompactionEntry => e.type === "compaction");

    test("a threshold compaction goes through the lane and stores the payload beside a readable summary", async () => {
      compactionReply = lane.compacted;
      const { manager, agent, readable } = await session();
      const before = server.requests.length;
      await agent.prompt("next step");
      const sent = server.requests.slice(before);
      const compactionAt = sent.findIndex(lane.isCompaction);
      assert.ok(compactionAt > 0, `a compaction request after the live one (paths: ${sent.map((r) => r.path).join(", ")})`);
      assert.equal(sent.filter(lane.isCompaction).length, 1);
      lane.checkRequest(sent[compactionAt], sent[0]);

      const [entry] = compactions(manager);
      const details = entry.details as { method: string; native: Record<string, unknown> };
      assert.equal(details.method, "native");
      const native = entry.preserveData?.native as Record<string, unknown>;
      assert.deepEqual(
        { ...native, data: JSON.stringify(native.data) },
        { lane: native.lane, provider: lane.model("", lane.ids[0]).provider, model: lane.ids[0], api: lane.model("", lane.ids[0]).api, route: native.route, baseUrl: server.baseUrl, data: JSON.stringify(lane.payload) },
      );
      // readable: the provider's own text where it writes one, bonsai's summary of the span otherwise
      if (lane.providerText) assert.ok(entry.summary.startsWith(lane.providerText), entry.summary.slice(0, 200));
      else assert.match(entry.summary, /^Summary 1 of/);
      assert.equal(readable.requests.some((r) => r.purpose === "history"), !lane.providerText);

      assert.equal(details.native.cacheReadShare, lane.expectedShare);
      assert.equal(details.native.tokensWritten, lane.expectedWritten);
      assert.ok((details.native.tokensShed as number) > 50_000, `shed ${details.native.tokensShed}`);
      assert.equal(details.native.netTokens, (details.native.tokensShed as number) - lane.expectedWritten);

      // the next request to the same model replays the payload instead of the readable summary
      const next = server.requests.length;
      // a long prompt, so that the compaction after it has older history to compact again
      await agent.prompt(bigText("and now?", 30_000));
      const replayed = server.requests.slice(next).filter((r) => !lane.isCompaction(r));
      assert.ok(replayed.length >= 1 && replayed.every(lane.replays), JSON.stringify(replayed[0]?.body).slice(0, 400));
      lane.checkReplay?.(replayed[0], sent[0], entry.summary);
      // a compaction after a native one sends the payload too, so its prefix is the live requests'
      const chained = server.requests.slice(next).filter(lane.isCompaction);
      assert.equal(chained.length, lane.chains ? 1 : 0);
      for (const request of chained) assert.ok(lane.replays(request), "the compaction request carries the previous payload");

      // another model gets the readable summary, and no payload
      agent.setModel((await session()).models[1]);
      const switched = server.requests.length;
      await agent.prompt("with the other model");
      const other = server.requests.slice(switched).filter((r) => !lane.isCompaction(r));
      assert.ok(other.length >= 1 && other.every(lane.reads), JSON.stringify(other[0]?.body).slice(0, 400));
      assert.ok(!other.some(lane.replays));

      // pi opens the file and reads the readable summary
      const piAgent = await import("@mariozechner/pi-coding-agent");
      const file = manager.getSessionFile() as string;
      const piContext = piAgent.SessionManager.open(file).buildSessionContext();
      const first = piContext.messages[0] as { role: string; summary?: string };
      assert.equal(first.role, "compactionSummary");
      assert.equal(first.summary, compactions(manager).at(-1)?.summary);
      manager.close();
    });

    test("a refused replay is sent again with the readable summary, and that compaction is not replayed again", async () => {
      compactionReply = lane.compacted;
      refuseReplay = true;
      try {
        const { manager, agent, events } = await session();
        await agent.prompt("next step");
        assert.equal(compactions(manager).length, 1);
        const next = server.requests.length;
        await agent.prompt("and now?");
        const sent = server.requests.slice(next).filter((r) => !lane.isCompaction(r));
        assert.ok(lane.replays(sent[0]), "the payload was offered first");
        assert.ok(lane.reads(sent[1]), "then the readable summary");
        // the answer to "and now?" is the provider's, not an error (every answer here crosses the threshold, so a compaction follows it)
        const messages = manager.getEntries().filter((e) => e.type === "message") as { message: { role: string; stopReason?: string; content: { text?: string }[] } }[];
        const last = messages.at(-1) as (typeof messages)[number];
        assert.equal(last.message?.role, "assistant");
        assert.equal(last.message?.stopReason, "stop");
        assert.equal(last.message?.content[0]?.text, "ok");
        assert.ok(events.some((e) => e.type === "warning" && /refused the replayed compaction/.test(e.message)));
        const later = server.requests.length;
        await agent.prompt("once more");
        assert.ok(server.requests.slice(later).every((r) => !lane.replays(r)));
        manager.close();
      } finally {
        refuseReplay = false;
      }
    });

    test("a summary edited before it is stored keeps no payload: the edit is what every model reads", async () => {
      compactionReply = lane.compacted;
      const { manager, agent } = await session();
      await agent.compact(undefined, { review: async (summary) => `${summary}\n\nEdited: the login form is out of scope.` });
      const [entry] = compactions(manager);
      assert.equal((entry.details as { method: string }).method, "native");
      assert.equal(entry.preserveData, undefined);
      assert.match(entry.summary, /Edited: the login form is out of scope\.$/);
      const next = server.requests.length;
      await agent.prompt("go on");
      const sent = server.requests.slice(next).filter((r) => !lane.isCompaction(r));
      assert.ok(sent.length >= 1 && lane.reads(sent[0]) && !lane.replays(sent[0]));
      manager.close();
    });

    test("a summary made ahead of the threshold goes through the lane too, and its payload is stored", async () => {
      compactionReply = lane.compacted;
      // past 80% of the threshold (183,616 tokens) but under it, then past it
      liveTokens = [160_000];
      const { manager, agent, events } = await session(80);
      const before = server.requests.length;
      await agent.prompt("next step");
      assert.equal(compactions(manager).length, 0);
      await agent.waitForIdle();
      await agent.prompt("go on");
      const sent = server.requests.slice(before);
      assert.equal(sent.filter(lane.isCompaction).length, 1);
      // the summary started ahead was the one used
      const background = events.filter((e) => e.type === "background_summary").map((e) => (e as { status: string }).status);
      assert.deepEqual(background, ["started", "ready", "used"]);
      const [entry] = compactions(manager);
      assert.equal((entry.details as { method: string }).method, "native");
      assert.equal(JSON.stringify((entry.preserveData?.native as { data: unknown } | undefined)?.data), JSON.stringify(lane.payload));
      assert.ok(events.some((e) => e.type === "auto_compaction_end" && e.method === "native"));
      manager.close();
    });

    test("a native failure falls back to the next method once", async () => {
      compactionReply = { status: 400, message: "context_management: compaction is not available for this model" };
      const { manager, agent, events, readable } = await session();
      const before = server.requests.length;
      await agent.prompt("next step");
      const [first] = compactions(manager);
      assert.equal((first.details as { method: string }).method, "model");
      // a readable summary made beside the failed request is the next method's, not asked for twice
      assert.equal(readable.requests.filter((r) => r.purpose === "history").length, 1);
      assert.equal(first.preserveData, undefined);
      const retries = events.filter((e) => e.type === "compaction_retry");
      assert.equal(retries.length, 1);
      assert.match(JSON.stringify(retries[0]), /not available for this model/);

      // the chain went on to the next method once; that it is not offered again is summarizer-source.test.ts's
      assert.equal(server.requests.slice(before).filter(lane.isCompaction).length, 1);
      manager.close();
    });
  });
}
