/**
 * Scripted servers that speak two providers' documented wire formats on 127.0.0.1, for the
 * native compaction lanes: Anthropic's Messages API (`POST /v1/messages`, streamed answers as
 * server-sent events, non-streamed ones as JSON) and OpenAI's Responses API (`POST
 * /v1/responses` streamed, `POST /v1/responses/compact` as JSON). Every request is recorded with
 * its path, headers and parsed body; the test's `respond` decides each answer.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export type ProviderReply =
  /** a streamed answer with this text; `inputTokens` is the usage the provider reports */
  | { text: string; inputTokens?: number }
  /** a JSON body as it is (a compaction's answer) */
  | { json: Record<string, unknown> }
  | { status: number; message: string };

export interface ProviderServer {
  /** what a model's `baseUrl` is set to */
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

type Sse = (event: string, data: Record<string, unknown>) => void;

const anthropicStream = (send: Sse, text: string, inputTokens: number) => {
  const usage = { input_tokens: inputTokens, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  send("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "scripted", content: [], stop_reason: null, usage } });
  send("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
  send("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } });
  send("content_block_stop", { type: "content_block_stop", index: 0 });
  send("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { ...usage, output_tokens: 5 } });
  send("message_stop", { type: "message_stop" });
};

const responsesStream = (send: Sse, text: string, inputTokens: number) => {
  const item = { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] };
  send("response.created", { type: "response.created", response: { id: "resp_1", status: "in_progress" } });
  send("response.output_item.added", { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } });
  send("response.content_part.added", { type: "response.content_part.added", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
  send("response.output_text.delta", { type: "response.output_text.delta", output_index: 0, content_index: 0, delta: text });
  send("response.output_item.done", { type: "response.output_item.done", output_index: 0, item });
  const usage = { input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, total_tokens: inputTokens + 5 };
  send("response.completed", { type: "response.completed", response: { id: "resp_1", status: "completed", usage } });
};

/** The error body each provider documents. */
const errorBody = (kind: "anthropic" | "openai", message: string) =>
  kind === "anthropic" ? { type: "error", error: { type: "invalid_request_error", message } } : { error: { type: "invalid_request_error", message, code: null } };

async function startServer(
  kind: "anthropic" | "openai",
  respond: (request: RecordedRequest, index: number) => ProviderReply,
): Promise<ProviderServer> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer(async (req, res) => {
    let raw = "";
    for await (const part of req) raw += part;
    const request: RecordedRequest = { path: req.url ?? "", headers: req.headers, body: JSON.parse(raw) as Record<string, unknown> };
    requests.push(request);
    const reply = respond(request, requests.length - 1);
    if ("status" in reply) {
      res.writeHead(reply.status, { "content-type": "application/json" }).end(JSON.stringify(errorBody(kind, reply.message)));
    } else if ("json" in reply) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply.json));
    } else {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const send: Sse = (event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      (kind === "anthropic" ? anthropicStream : responsesStream)(send, reply.text, reply.inputTokens ?? 1000);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    // Anthropic's base URL is the host (the SDK adds /v1/messages); OpenAI's includes /v1
    baseUrl: kind === "anthropic" ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export const startAnthropicServer = (respond: (request: RecordedRequest, index: number) => ProviderReply) => startServer("anthropic", respond);
export const startResponsesServer = (respond: (request: RecordedRequest, index: number) => ProviderReply) => startServer("openai", respond);
