/**
 * The AI SDK's `ModelMessage` for the shared core. Its messages carry no ids, so a message is
 * known by its place (`by-place`): each call's messages must begin with the messages the helper
 * last saw or returned, and whatever follows them is new.
 */
import type { ModelMessage } from 'ai';
import type { MessageAdapter } from '../compaction/adapter';
import { roleOf, textOf, toolCallIds, toolResultIds, transcriptLine } from './messages';

export const modelMessages: MessageAdapter<ModelMessage, ModelMessage> = {
  identity: 'by-place',
  key: (m) => m,
  role: roleOf,
  text: textOf,
  toolCallIds,
  toolResultIds,
  transcriptLine,
  copy: (m) => ({ ...m }),
  textMessage: (text) => ({ role: 'user', content: text }),
};
