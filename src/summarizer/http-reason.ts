/**
 * The reason an HTTP error body gives, read the way servers write it: `{error: "…"}`,
 * `{message: "…"}`, `{error: {message: "…"}}` (OpenAI, Anthropic), or a short plain-text body.
 * Pure.
 */
export function reasonFromBody(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const reason = typeof body.error === "string" ? body.error : typeof body.message === "string" ? body.message : undefined;
    if (reason) return reason;
    if (body.error && typeof body.error === "object" && typeof (body.error as { message?: unknown }).message === "string") {
      return (body.error as { message: string }).message;
    }
  } catch {
    // not JSON: a short plain-text body is still the best reason we have
  }
  const plain = text.trim().replace(/\s+/g, " ");
  return plain && plain.length <= 300 ? plain : undefined;
}
