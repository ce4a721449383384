/**
 * The Claude Code transcript reader (src/integrations/claude-code/transcript.ts) on transcripts
 * recorded from Claude Code 2.1.337 (test/fixtures/claude-code/, trimmed and anonymised): which
 * lines are turns and with what role, the boundary and the summary; and, for any bytes, that
 * reading in pieces gives what one read gives, and that the lines' ranges cover the input.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import {
  CLEARED_TOOL_RESULT,
  classifyLine,
  completeLines,
  parseTranscript,
  type TranscriptEntry,
  type TurnEntry,
} from '../../src/integrations/claude-code/transcript';
import { defaultClaudePins } from '../../src/integrations/claude-code/pins';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'claude-code');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));

const turns = (entries: TranscriptEntry[]) =>
  entries.filter((e): e is TurnEntry => e.kind === 'turn');

describe('a recorded transcript with a tool call, CLAUDE.md and a /compact', () => {
  const bytes = fixture('tool-call-and-compact.jsonl');
  const { entries, next } = parseTranscript(bytes, 0);

  it('reads every line, to the end of the file', () => {
    expect(next).toBe(bytes.length);
    expect(entries).toHaveLength(bytes.toString('utf8').split('\n').length - 1);
    expect(entries.filter((e) => e.kind === 'unreadable')).toEqual([]);
  });

  it('gives the messages their contract roles: USER, TOOL_CALL, TOOL_RESULT, ASSISTANT', () => {
    const messages = turns(entries).filter((t) => t.role !== 'SYSTEM');
    expect(messages.slice(0, 5).map((t) => [t.role, t.text])).toEqual([
      ['USER', 'Rule: never use tabs. RUNTOOL please'],
      ['ASSISTANT', 'Answer 1'],
      ['USER', 'message two RUNTOOL'],
      ['TOOL_CALL', ''],
      ['TOOL_RESULT', 'tool-output-2'],
    ]);
    expect(messages[3]!.toolUseIds).toEqual(['toolu_2']);
    expect(messages[4]!.toolResultIds).toEqual(['toolu_2']);
  });

  it("counts an assistant line's tokens from its usage, the others by estimate", () => {
    const answer = turns(entries).find((t) => t.text === 'Answer 1')!;
    expect(answer.tokens).toBe(5); // usage.output_tokens
    expect(answer.contextTokens).toBe(1005);
    const user = turns(entries)[0]!;
    expect(user.tokens).toBe(Math.ceil(JSON.stringify(user.text).length / 4));
  });

  it('reads rendered attachments as SYSTEM turns, CLAUDE.md as memory with its file text', () => {
    const memory = turns(entries).filter((t) => t.memory);
    expect(memory).toHaveLength(2); // attached again after the compaction
    expect(memory[0]!.text).toBe(
      '# Project rules\nYou must always write tests first. Never push to main.',
    );
    expect(memory[0]!.role).toBe('SYSTEM');
    // session_context has nothing rendered: not context.
    const line = (i: number) => bytes.toString('utf8').split('\n')[i]!;
    expect(JSON.parse(line(7)).attachment.type).toBe('session_context');
    expect(entries[7]!.kind).toBe('other');
  });

  it('finds the compact boundary with the preserved messages, and the summary (not a turn)', () => {
    const boundary = entries.find((e) => e.kind === 'boundary');
    expect(boundary).toMatchObject({
      kind: 'boundary',
      trigger: 'manual',
      preservedUuids: ['fad2ab2f-b18e-4fab-8e59-4eab5538975e'],
    });
    const summary = entries.find((e) => e.kind === 'summary')!;
    expect(entries.indexOf(summary)).toBe(entries.indexOf(boundary!) + 1);
    // The preserved message is a turn read before the boundary.
    expect(
      turns(entries).find((t) => t.uuid === 'fad2ab2f-b18e-4fab-8e59-4eab5538975e')?.text,
    ).toBe('Answer 3');
  });

  it('pins the user rule and CLAUDE.md (CONSTRAINT) by default, nothing else', () => {
    const answered = new Set(turns(entries).flatMap((t) => t.toolResultIds));
    const pinned = turns(entries)
      .map((t) => [t.text.slice(0, 20), defaultClaudePins(t, { answered })] as const)
      .filter(([, p]) => p.length > 0);
    expect(pinned).toEqual([
      ['Rule: never use tabs', ['CONSTRAINT']],
      ['# Project rules\nYou ', ['CONSTRAINT']],
      ['# Project rules\nYou ', ['CONSTRAINT']],
    ]);
  });

  it('pins a tool call whose result was not read yet as OPEN_TOOL_CALL', () => {
    const call = turns(entries).find((t) => t.role === 'TOOL_CALL')!;
    expect(defaultClaudePins(call, { answered: new Set() })).toEqual(['OPEN_TOOL_CALL']);
  });
});

describe('the recorded probe transcript (a hook output attachment, a /compact)', () => {
  const { entries } = parseTranscript(fixture('manual-compact.jsonl'), 0);

  it('reads the SessionStart hook output as a SYSTEM turn, not pinned (what the guard puts back is not pinned again)', () => {
    const hook = turns(entries).find((t) => t.text.includes('SessionStart:compact hook success'))!;
    expect(hook.role).toBe('SYSTEM');
    expect(defaultClaudePins(hook, { answered: new Set() })).toEqual([]);
    expect(entries.filter((e) => e.kind === 'boundary')).toHaveLength(1);
    expect(entries.filter((e) => e.kind === 'summary')).toHaveLength(1);
  });
});

describe('lines and offsets', () => {
  it('leaves a last line without its newline for the next read', () => {
    const bytes = Buffer.from('{"type":"mode"}\n{"type":"us');
    const r = completeLines(bytes, 100);
    expect(r).toEqual({ lines: [{ start: 100, end: 116 }], next: 116 });
  });

  it('reads a line of cleared tool results as a clearing naming them, not a turn', () => {
    const block = (content: string) => ({ tool_use_id: 'toolu_1', type: 'tool_result', content });
    const line = (content: string) =>
      JSON.stringify({ type: 'user', message: { role: 'user', content: [block(content)] } });
    expect(classifyLine(line(CLEARED_TOOL_RESULT), { start: 0, end: 1 })).toEqual({
      start: 0,
      end: 1,
      kind: 'cleared',
      toolResultIds: ['toolu_1'],
    });
    expect(classifyLine(line('output'), { start: 0, end: 1 })).toMatchObject({
      kind: 'turn',
      role: 'TOOL_RESULT',
    });
  });

  it('reports a line that is not a JSON object as unreadable, and a side chain as no turn', () => {
    expect(classifyLine('not json', { start: 0, end: 9 }).kind).toBe('unreadable');
    expect(classifyLine('[1]', { start: 0, end: 4 }).kind).toBe('unreadable');
    const side = { type: 'user', isSidechain: true, message: { role: 'user', content: 'x' } };
    expect(classifyLine(JSON.stringify(side), { start: 0, end: 1 }).kind).toBe('other');
  });

  const recorded = fixture('tool-call-and-compact.jsonl');
  const streams = fc.oneof(
    fc.constant(recorded),
    fc
      .array(
        fc.oneof(
          fc.constant('\n'),
          fc.string({ maxLength: 12 }),
          fc.constant('{"type":"user","message":{"content":"é"}}'),
        ),
        {
          maxLength: 30,
        },
      )
      .map((parts) => Buffer.from(parts.join(''), 'utf8')),
  );

  it('gives the same entries however the byte stream is split into reads', () => {
    fc.assert(
      fc.property(
        streams.chain((bytes) =>
          fc.tuple(
            fc.constant(bytes),
            fc.uniqueArray(fc.integer({ min: 0, max: bytes.length }), { maxLength: 8 }),
          ),
        ),
        ([bytes, cuts]) => {
          const whole = parseTranscript(bytes, 0);
          // Reads as a follower makes them: each from where the last one stopped, up to a cut.
          const pieces: TranscriptEntry[] = [];
          let offset = 0;
          for (const cut of [...cuts.sort((a, b) => a - b), bytes.length]) {
            if (cut < offset) continue;
            const r = parseTranscript(bytes.subarray(offset, cut), offset);
            pieces.push(...r.entries);
            offset = r.next;
          }
          expect(pieces).toEqual(whole.entries);
          expect(offset).toBe(whole.next);
        },
      ),
    );
  });

  it("gives ranges that concatenate back to the input's complete lines, in order", () => {
    fc.assert(
      fc.property(streams, (bytes) => {
        const { lines, next } = completeLines(bytes, 0);
        const joined = Buffer.concat(lines.map((l) => bytes.subarray(l.start, l.end)));
        expect(joined.equals(bytes.subarray(0, next))).toBe(true);
        lines.forEach((l, i) => expect(l.start).toBe(i === 0 ? 0 : lines[i - 1]!.end));
        expect(bytes.subarray(next).includes(0x0a)).toBe(false);
      }),
    );
  });
});

describe('a hostile line: JSON nested deeper than the stack', () => {
  const range = { start: 0, end: 0 };
  const deepArray = (depth: number, type: string) =>
    `{"type":"${type}","uuid":"u1","message":{"role":"user","content":` +
    '['.repeat(depth) +
    ']'.repeat(depth) +
    '}}';
  const deepToolResults = (depth: number) =>
    '{"type":"user","uuid":"u2","message":{"role":"user","content":' +
    '[{"type":"tool_result","tool_use_id":"t","content":'.repeat(depth) +
    '"x"' +
    '}]'.repeat(depth) +
    '}}';

  it('is still a turn of its role, counted by its size, with no text to pin (the hook does not crash)', () => {
    const line = deepArray(100_000, 'assistant');
    expect(classifyLine(line, range)).toMatchObject({
      kind: 'turn',
      uuid: 'u1',
      role: 'ASSISTANT',
      tokens: Math.ceil(Buffer.byteLength(line) / 4),
      text: '',
      toolUseIds: [],
    });
  });

  it('a chain of tool results nested 100,000 deep is a USER turn, not a stack overflow', () => {
    expect(classifyLine(deepToolResults(100_000), range)).toMatchObject({
      kind: 'turn',
      role: 'USER',
      text: '',
    });
  });

  it('the same nesting at a depth the reader can walk keeps its text and tool ids', () => {
    expect(classifyLine(deepToolResults(50), range)).toMatchObject({
      kind: 'turn',
      role: 'TOOL_RESULT',
      text: 'x',
      toolResultIds: ['t'],
    });
  });

  it('a deep line that is not a user or assistant message is not a turn', () => {
    expect(classifyLine(deepArray(100_000, 'progress'), range)).toMatchObject({ kind: 'other' });
  });
});
