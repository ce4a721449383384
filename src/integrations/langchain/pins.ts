/**
 * Roles and pins of LangChain messages (contract §3). The default pins: system instructions and
 * the user's explicit rules are CONSTRAINT, a tool call with no answer yet is OPEN_TOOL_CALL.
 */
import { AIMessage, type BaseMessage, ToolMessage } from '@langchain/core/messages';
import type { Pin, Role } from '../../engine/events';
import { RULE_WORDS } from '../compaction/ruleWords';

export interface ClassifyContext {
  role: Role;
  /** The message's index in the agent's current `messages`. */
  index: number;
  /** The agent's current `messages` (to see, e.g., whether a tool call was answered). */
  messages: readonly BaseMessage[];
}

/** What a summary must re-assert of one message. */
export type PinClassifier = (message: BaseMessage, context: ClassifyContext) => Pin[];

export function roleOf(message: BaseMessage): Role {
  switch (message.getType()) {
    case 'system':
    case 'developer':
      return 'SYSTEM';
    case 'human':
      return 'USER';
    case 'tool':
      return 'TOOL_RESULT';
    case 'ai':
      return toolCallIds(message).length > 0 ? 'TOOL_CALL' : 'ASSISTANT';
    default:
      return 'ASSISTANT';
  }
}

export { RULE_WORDS };

export function textOf(message: BaseMessage): string {
  const c = message.content;
  if (typeof c === 'string') return c;
  return c
    .map((part) =>
      typeof part === 'string'
        ? part
        : 'text' in part && typeof part.text === 'string'
          ? part.text
          : '',
    )
    .join('');
}

function toolCallIds(message: BaseMessage): string[] {
  if (!AIMessage.isInstance(message)) return [];
  return (message.tool_calls ?? []).map((c) => c.id).filter((id): id is string => !!id);
}

/**
 * SYSTEM → CONSTRAINT; a USER message with a rule word (RULE_WORDS) → CONSTRAINT; a TOOL_CALL
 * some of whose calls have no ToolMessage answer in the messages → OPEN_TOOL_CALL.
 */
export const defaultPins: PinClassifier = (message, { role, messages }) => {
  if (role === 'SYSTEM') return ['CONSTRAINT'];
  if (role === 'USER') return RULE_WORDS.test(textOf(message)) ? ['CONSTRAINT'] : [];
  if (role === 'TOOL_CALL') {
    const answered = new Set(
      messages.filter((m) => ToolMessage.isInstance(m)).map((m) => (m as ToolMessage).tool_call_id),
    );
    return toolCallIds(message).some((id) => !answered.has(id)) ? ['OPEN_TOOL_CALL'] : [];
  }
  return [];
};
