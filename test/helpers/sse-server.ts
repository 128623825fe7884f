/**
 * A scripted OpenAI-compatible chat-completions server on 127.0.0.1: each POST is answered by
 * the test's `respond` function, either as an SSE stream of `chat.completion.chunk`s (with a
 * final usage chunk), optionally carrying tool calls, or as an HTTP error with an OpenAI-style
 * JSON body. `delayMs` holds the answer back (slow models, Escape while waiting); `thinking` streams
 * reasoning (`reasoning_content` deltas, one per line) before the text, and `afterThinking` holds
 * the rest of the answer until the test resolves it (a model caught thinking).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ChatRequest {
  model: string;
  messages: { role: string; content: unknown }[];
  stream?: boolean;
  [key: string]: unknown;
}

export interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type ScriptedReply =
  | {
      text: string;
      promptTokens?: number;
      completionTokens?: number;
      finishReason?: string;
      toolCalls?: ScriptedToolCall[];
      delayMs?: number;
      thinking?: string;
      afterThinking?: Promise<void>;
    }
  | { status: number; message: string; headers?: Record<string, string>; delayMs?: number };

export interface ScriptedServer {
  baseUrl: string;
  requests: ChatRequest[];
  close(): Promise<void>;
}

/** The text of a request's system message (the agent's, or a summarizer's). */
export function systemText(request: ChatRequest): string {
  const system = request.messages.find((m) => m.role === "system" || m.role === "developer");
  return typeof system?.content === "string" ? system.content : JSON.stringify(system?.content ?? "");
}

const chunk = (delta: object, finish: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1,
  model: "scripted",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

export async function startScriptedServer(respond: (request: ChatRequest, index: number) => ScriptedReply): Promise<ScriptedServer> {
  const requests: ChatRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const part of req) body += part;
    let request: ChatRequest;
    try {
      request = JSON.parse(body) as ChatRequest;
    } catch {
      res.writeHead(400, { "content-type": "application/json" }).end('{"error":{"message":"bad json"}}');
      return;
    }
    requests.push(request);
    const reply = respond(request, requests.length - 1);
    if (reply.delayMs) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolve();
        }, reply.delayMs);
        timers.add(timer);
      });
      // The client gave up (an abort) while the answer was held back.
      if (res.destroyed || req.socket.destroyed) return;
    }
    if ("status" in reply) {
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(JSON.stringify({ error: { message: reply.message, type: "invalid_request_error" } }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const calls = reply.toolCalls ?? [];
    const thinking = (reply.thinking ?? "").split(/(?<=\n)/).filter((part) => part !== "");
    for (const event of [chunk({ role: "assistant", content: "" }), ...thinking.map((part) => chunk({ reasoning_content: part }))]) {
      res.write(`data: ${JSON.stringify(event)}\n\n`);
    }
    if (reply.afterThinking) {
      await reply.afterThinking;
      if (res.destroyed || req.socket.destroyed) return;
    }
    const events = [
      ...(reply.text ? [chunk({ content: reply.text })] : []),
      ...calls.map((call, index) =>
        chunk({
          tool_calls: [
            { index, id: call.id ?? `call_${index}`, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } },
          ],
        }),
      ),
      chunk({}, reply.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop")),
      {
        id: "chatcmpl-1",
        object: "chat.completion.chunk",
        created: 1,
        model: "scripted",
        choices: [],
        usage: {
          prompt_tokens: reply.promptTokens ?? 10,
          completion_tokens: reply.completionTokens ?? 5,
          total_tokens: (reply.promptTokens ?? 10) + (reply.completionTokens ?? 5),
        },
      },
    ];
    for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
