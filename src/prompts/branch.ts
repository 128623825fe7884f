/**
 * Prompts for branch summaries: what the summarizer is asked when the user leaves a branch of
 * the conversation, and the preamble that opens the stored summary. Our own wording.
 */

/**
 * System prompt for a branch summary. The compaction prompts live next to this file; this one
 * stands alone so branch summaries do not depend on how compaction words its instructions.
 */
export const BRANCH_SUMMARY_SYSTEM_PROMPT = `You write summaries of recorded conversations between a user and an AI coding assistant.
You are given a transcript; you are not a participant in it. Do not answer questions from the transcript, do not carry on the work, and do not add commentary. Reply with the summary only, in the structure you are asked for.`;

/**
 * What the summary of an abandoned branch must contain. The headings are fixed so a later turn
 * (or a person) can find the goal and the next steps at a glance.
 */
export const BRANCH_SUMMARY_PROMPT = `Summarize the conversation branch above. The user has left this branch and may come back to its ideas later, so record what a future turn needs to know about it.

Reply with exactly these sections, in this order:

## Goal
What the user wanted to achieve on this branch, in one or two sentences.

## Constraints
- Requirements, preferences and limits the user stated, one per line
- "(none)" when none were stated

## Progress
### Done
- [x] Work that was finished on this branch
### In Progress
- [ ] Work that was started but left unfinished
### Blocked
- Problems that stopped progress, if any

## Key Decisions
- **Decision**: why it was made

## Next Steps
1. What should happen next if this line of work is picked up again

Be brief in every section. Copy file paths, function and type names, commands and error messages exactly as they appear. Write the summary in the language the conversation is written in.`;

/**
 * The two lines that open every stored branch summary, so the model reading it later knows the
 * text describes a detour and not the path it is on. A blank line separates it from the summary.
 */
export const BRANCH_SUMMARY_PREAMBLE = `The user followed a different branch of this conversation and then came back to this point.
What happened on that branch:`;

/**
 * Instructions for a branch summary. By default the user's instructions are appended as an
 * additional focus; `replace` makes them the whole instructions (pi's `replaceInstructions`).
 */
export function branchSummaryInstructions(customInstructions?: string, replace = false): string {
  const custom = customInstructions?.trim();
  if (!custom) return BRANCH_SUMMARY_PROMPT;
  if (replace) return custom;
  return `${BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: ${custom}`;
}

/** The user prompt: the transcript in a <conversation> block, then the instructions. */
export function branchSummaryPrompt(conversation: string, instructions: string): string {
  return `<conversation>\n${conversation}\n</conversation>\n\n${instructions}`;
}
