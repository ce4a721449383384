/** Roles, pins, sizes and the tail cut of AI SDK messages (src/integrations/ai-sdk/messages.ts). */
import type { ModelMessage } from 'ai';
import {
  approximateTokens,
  defaultPins,
  roleOf,
  tailCutoff,
  transcriptLine,
} from '../../src/integrations/ai-sdk/messages';

const call = (id: string): ModelMessage => ({
  role: 'assistant',
  content: [{ type: 'tool-call', toolCallId: id, toolName: 'rm', input: { path: '/tmp' } }],
});
const result = (id: string): ModelMessage => ({
  role: 'tool',
  content: [
    { type: 'tool-result', toolCallId: id, toolName: 'rm', output: { type: 'text', value: 'ok' } },
  ],
});

describe('AI SDK messages', () => {
  it('maps roles to contract roles', () => {
    const all: ModelMessage[] = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
      { role: 'assistant', content: 'a' },
      call('c1'),
      result('c1'),
    ];
    expect(all.map(roleOf)).toEqual(['SYSTEM', 'USER', 'ASSISTANT', 'TOOL_CALL', 'TOOL_RESULT']);
  });

  it('pins system messages and user rules as CONSTRAINT, an unanswered call as OPEN_TOOL_CALL', () => {
    const pins = (m: ModelMessage, messages: ModelMessage[] = [m]) =>
      defaultPins(m, { role: roleOf(m), index: 0, messages });
    expect(pins({ role: 'system', content: 'Be careful.' })).toEqual(['CONSTRAINT']);
    expect(pins({ role: 'user', content: [{ type: 'text', text: 'Never touch /prod.' }] })).toEqual(
      ['CONSTRAINT'],
    );
    expect(pins({ role: 'user', content: 'What time is it?' })).toEqual([]);
    expect(pins(call('c1'))).toEqual(['OPEN_TOOL_CALL']);
    expect(pins(call('c1'), [call('c1'), result('c1')])).toEqual([]);
  });

  it('counts about four characters a token, at least one a message', () => {
    expect(approximateTokens([{ role: 'user', content: 'x'.repeat(400) }])).toBe(100);
    expect(approximateTokens([{ role: 'user', content: '' }])).toBe(1);
  });

  it('never keeps a tool result without its call: the cut moves back to the call', () => {
    const messages = [
      { role: 'user', content: 'go' } as ModelMessage,
      call('a'),
      result('a'),
      call('b'),
      result('b'),
    ];
    expect(tailCutoff(messages, 1)).toBe(3); // [call b, result b] kept together
    expect(tailCutoff(messages, 2)).toBe(3);
    expect(tailCutoff(messages, 3)).toBe(1);
    expect(tailCutoff(messages, 10)).toBe(0);
  });

  it('writes bytes losslessly in a transcript line', () => {
    const m: ModelMessage = {
      role: 'user',
      content: [
        { type: 'file', data: new Uint8Array([0, 255, 7]), mediaType: 'application/octet-stream' },
      ],
    };
    expect(JSON.parse(transcriptLine(m)).content[0].data).toEqual({ type: 'base64', data: 'AP8H' });
  });
});
