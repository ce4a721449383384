/**
 * LangChain's `BaseMessage` for the shared core. A message keeps its id across the agent's
 * steps (`by-key`; one without an id is given one), a copy is a new message under a new id, and
 * the transcript line is langchain's own StoredMessage form.
 */
import {
  type BaseMessage,
  HumanMessage,
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
} from '@langchain/core/messages';
import { randomUUID } from 'node:crypto';
import type { MessageAdapter } from '../compaction/adapter';
import { roleOf, textOf, toolCallIds, toolResultIds } from './pins';

/** The message exactly as it was, under a new id (a copy is a new turn). */
function verbatimCopy(m: BaseMessage): BaseMessage {
  const [copy] = mapStoredMessagesToChatMessages(mapChatMessagesToStoredMessages([m]));
  copy!.id = randomUUID();
  return copy!;
}

export const baseMessages: MessageAdapter<BaseMessage, string> = {
  identity: 'by-key',
  key: (m) => (m.id ??= randomUUID()),
  role: roleOf,
  text: textOf,
  toolCallIds,
  toolResultIds,
  transcriptLine: (m) => JSON.stringify(mapChatMessagesToStoredMessages([m])[0]),
  copy: verbatimCopy,
  textMessage: (text) => new HumanMessage(text),
};
