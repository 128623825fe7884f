/**
 * Reading a request body as JSON, with a reason a client can act on. Fastify's own parser says
 * only "invalid JSON" both for a syntax error and for a key it refuses, so the server uses this.
 * Keys that could reach an object's prototype when a body is merged into another object
 * (`__proto__`, and `constructor` holding a `prototype`) are refused, as fastify refuses them.
 */

export class RequestJsonError extends SyntaxError {
  readonly statusCode = 400;
  override name = "RequestJsonError";
}

const PROTO_KEY = 'JSON body has a "__proto__" or "constructor.prototype" key, which is refused: send {systemPrompt, prompt}';

export function parseRequestJson(body: string): unknown {
  if (body.trim() === "") throw new RequestJsonError("body is empty: send {systemPrompt, prompt}");
  try {
    return JSON.parse(body, (key, value) => {
      if (key === "__proto__" || (key === "constructor" && typeof value === "object" && value !== null && Object.hasOwn(value, "prototype"))) {
        throw new RequestJsonError(PROTO_KEY);
      }
      return value;
    });
  } catch (error) {
    if (error instanceof RequestJsonError) throw error;
    const reason = (error as Error).message.split("\n")[0].slice(0, 200);
    throw new RequestJsonError(`malformed JSON body: ${reason}`);
  }
}
