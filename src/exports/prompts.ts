/**
 * `bonsai-sessions/prompts`: the texts bonsai sends to a summarizer, for agents that build their
 * own requests or show them. Written for bonsai (docs/ARCHITECTURE.md, decisions 6 and 12).
 */
export {
  COMPACTION_SYSTEM_PROMPT,
  INITIAL_SUMMARY_PROMPT,
  UPDATE_SUMMARY_PROMPT,
  TURN_PREFIX_PROMPT,
  SHORT_SUMMARY_PROMPT,
  SUMMARY_SECTIONS,
  PROGRESS_SUBSECTIONS,
  TURN_PREFIX_SECTIONS,
} from "../prompts/compaction.js";
export { assembleSummaryPrompt, type SummaryPromptParts } from "../prompts/assemble.js";
export { BRANCH_SUMMARY_PROMPT, BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_SYSTEM_PROMPT } from "../prompts/branch.js";
