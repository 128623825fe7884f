/**
 * How a summarization prompt is put together: the material first (conversation, previous summary,
 * extra context), the instructions last, so the model reads what to describe before being told how.
 */

export interface SummaryPromptParts {
  /** serialized conversation; omitted when the prompt works on summaries alone (merging) */
  conversation?: string;
  previousSummary?: string;
  /** lines of extra context from hooks, each rendered as a list item */
  extraContext?: readonly string[];
  /** summaries of consecutive parts, oldest first (merging chunked summaries) */
  partialSummaries?: readonly string[];
  /** the instructions: one of the prompts in compaction.ts (or a hook's replacement) */
  instructions: string;
  /** the user's own focus for this summary, appended to the instructions */
  customInstructions?: string;
}

export function assembleSummaryPrompt(parts: SummaryPromptParts): string {
  let prompt = "";
  if (parts.conversation !== undefined) prompt += `<conversation>\n${parts.conversation}\n</conversation>\n\n`;
  if (parts.previousSummary) prompt += `<previous-summary>\n${parts.previousSummary}\n</previous-summary>\n\n`;
  for (const partial of parts.partialSummaries ?? []) prompt += `<partial-summary>\n${partial}\n</partial-summary>\n\n`;
  const extra = (parts.extraContext ?? []).filter((line) => line.trim() !== "");
  if (extra.length > 0) prompt += `<additional-context>\n${extra.map((line) => `- ${line}`).join("\n")}\n</additional-context>\n\n`;
  prompt += parts.instructions;
  const focus = parts.customInstructions?.trim();
  if (focus) prompt += `\n\nAdditional focus: ${focus}`;
  return prompt;
}
