/** Roles and default pins of LangChain messages (src/integrations/langchain/pins.ts). */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { defaultPins, roleOf } from '../../src/integrations/langchain';

const call = new AIMessage({
  content: '',
  tool_calls: [{ name: 'rm', args: {}, id: 'c1', type: 'tool_call' }],
});
const answer = new ToolMessage({ content: 'ok', tool_call_id: 'c1' });

describe('langchain roles and default pins', () => {
  it('maps message types to contract roles', () => {
    expect(
      [new SystemMessage('s'), new HumanMessage('h'), new AIMessage('a'), call, answer].map(roleOf),
    ).toEqual(['SYSTEM', 'USER', 'ASSISTANT', 'TOOL_CALL', 'TOOL_RESULT']);
  });

  it('pins system instructions and user rules as CONSTRAINT, not ordinary user text', () => {
    const pins = (m: HumanMessage | SystemMessage) =>
      defaultPins(m, { role: roleOf(m), index: 0, messages: [m] });
    expect(pins(new SystemMessage('You are a careful agent.'))).toEqual(['CONSTRAINT']);
    expect(pins(new HumanMessage('Never delete anything under /prod.'))).toEqual(['CONSTRAINT']);
    expect(pins(new HumanMessage("Don't email customers."))).toEqual(['CONSTRAINT']);
    expect(pins(new HumanMessage('What is the weather in Oslo?'))).toEqual([]);
  });

  it('pins a tool call as OPEN_TOOL_CALL only while no ToolMessage answers it', () => {
    expect(defaultPins(call, { role: 'TOOL_CALL', index: 0, messages: [call] })).toEqual([
      'OPEN_TOOL_CALL',
    ]);
    expect(defaultPins(call, { role: 'TOOL_CALL', index: 0, messages: [call, answer] })).toEqual(
      [],
    );
  });
});
