/**
 * Roles and default pins (contract §3), alike for every framework: system instructions and the
 * user's explicit rules are CONSTRAINT, a tool call with no result yet is OPEN_TOOL_CALL.
 */
import type { Role } from '../../engine/events';
import type { MessageAdapter, PinClassifier } from './adapter';
import { RULE_WORDS } from './ruleWords';

/** Who speaks in a message, as the frameworks name it. */
export type Speaker = 'system' | 'user' | 'assistant' | 'tool';

/** The contract role: an assistant message that calls tools is a TOOL_CALL. */
export function roleFor(speaker: Speaker, callsTools: boolean): Role {
  switch (speaker) {
    case 'system':
      return 'SYSTEM';
    case 'user':
      return 'USER';
    case 'tool':
      return 'TOOL_RESULT';
    case 'assistant':
      return callsTools ? 'TOOL_CALL' : 'ASSISTANT';
  }
}

type PinReader<M> = Pick<MessageAdapter<M, unknown>, 'text' | 'toolCallIds' | 'toolResultIds'>;

/**
 * SYSTEM → CONSTRAINT; a USER message with a rule word (RULE_WORDS) → CONSTRAINT; a TOOL_CALL
 * some of whose calls have no result in the messages → OPEN_TOOL_CALL.
 */
export function defaultPinsOf<M>(read: PinReader<M>): PinClassifier<M> {
  return (message, { role, messages }) => {
    if (role === 'SYSTEM') return ['CONSTRAINT'];
    if (role === 'USER') return RULE_WORDS.test(read.text(message)) ? ['CONSTRAINT'] : [];
    if (role === 'TOOL_CALL') {
      const answered = new Set(messages.flatMap((m) => read.toolResultIds(m)));
      return read.toolCallIds(message).some((id) => !answered.has(id)) ? ['OPEN_TOOL_CALL'] : [];
    }
    return [];
  };
}
