import { parseAcknowledgeArgs, acknowledgementPlan } from '../../src/cli/acknowledge';
import { formatLine, jsonRecord, safePreview } from '../../src/cli/tailFormat';
import type { SessionView } from '../../src/cli/sessionClient';
import type { Verdict } from '../../src/engine/outputs';

const verdict: Verdict = {
  sessionId: 's-1',
  requestId: 'c-1',
  decision: 'REFUSE',
  basis: null,
  action: 'HALT',
  reasons: [
    { code: 'EVICTED_PINNED', message: 'm', holes: [{ unit: 'TURNS', start: 1, end: 2 }] },
    { code: 'EVICTED_UNCOVERED', message: 'm', holes: [{ unit: 'TURNS', start: 0, end: 4 }] },
  ],
  rulesChecked: [],
  diagnostic: 'spill is DISABLED',
  spillRequestId: null,
  inputSeq: 35,
  requestEventId: 'e-35',
  requestedAt: 0,
  decidedAt: 0,
  engineVersion: 'x',
};

describe('tail output', () => {
  it('a verdict line names time, session, request, decision, action, reasons with holes', () => {
    expect(formatLine({ record: 'verdict', value: verdict })).toBe(
      '1970-01-01T00:00:00.000Z verdict s-1 c-1 REFUSE HALT seq 35 EVICTED_PINNED TURNS[1,2); EVICTED_UNCOVERED TURNS[0,4)',
    );
  });

  it('--json is the audit --json shape: record first, then the fields', () => {
    expect(Object.keys(jsonRecord({ record: 'verdict', value: verdict }))).toEqual([
      'record',
      ...Object.keys(verdict),
    ]);
  });

  it('a dead letter shows its error headers and a safe preview of its bytes', () => {
    const line = formatLine({
      record: 'dead-letter',
      value: {
        key: 'k',
        value: Buffer.from([0x7b, 0x1b, 0x5b, 0x32, 0x4a, 0xff]),
        headers: {
          'cg.error.code': 'NOT_UTF8',
          'cg.error.message': 'byte 5',
          'cg.source.topic': 'in',
          'cg.source.partition': '2',
          'cg.source.offset': '7',
        },
        timestamp: 0,
      },
    });
    expect(line).toContain('NOT_UTF8: byte 5 from in[2]@7 value (6 bytes): {\\x1b[2J\\xff');
    expect(line.includes('\u001b')).toBe(false);
    expect(safePreview(Buffer.from('é\u0007'))).toBe('é\\x07');
    expect(safePreview(Buffer.alloc(200, 0x61), 4)).toBe('aaaa…');
  });
});

describe('acknowledge input', () => {
  const ok = { session: 's-1', unit: 'TURNS', range: '0-4', by: 'me', reason: 'why' };
  it.each([
    [{ range: '8-2' }, /--range: 8-2 is reversed/],
    [{ range: '0..4' }, /--range: expected START-END/],
    [{ unit: 'PAGES' }, /--unit: expected one of TURNS, TOKENS, MESSAGES/],
    [{ by: ' ' }, /--by: empty/],
    [{ reason: ' ' }, /--reason: required/],
  ])('refuses %j', (patch, message) => {
    expect(() => parseAcknowledgeArgs({ ...ok, ...patch })).toThrow(message);
  });

  it("leaves `by` to the signing key's name when --by is not given", () => {
    expect(parseAcknowledgeArgs({ ...ok, by: undefined }).by).toBeNull();
    expect(parseAcknowledgeArgs(ok).by).toBe('me');
  });

  const view = {
    sessionId: 's-1',
    policy: { floor: { unit: 'TURNS', span: 12 } },
    knownHead: 32,
    gapHead: null,
    evicted: [{ unit: 'TURNS', start: 0, end: 4 }],
  } as unknown as SessionView;

  it("refuses a unit that is not the session's floor unit", () => {
    const a = parseAcknowledgeArgs({ ...ok, unit: 'MESSAGES' });
    expect(() => acknowledgementPlan(a, view)).toThrow(/MESSAGES is not the floor unit .*TURNS/);
  });

  it('says what the range writes off and what stays lost', () => {
    expect(acknowledgementPlan(parseAcknowledgeArgs(ok), view).join('\n')).toMatch(
      /writes off for good .*: TURNS\[0,4\)/,
    );
    const part = acknowledgementPlan(parseAcknowledgeArgs({ ...ok, range: '2-3' }), view).join(
      '\n',
    );
    expect(part).toMatch(/writes off for good .*: TURNS\[2,3\)/);
    expect(part).toMatch(/stays lost .*TURNS\[0,4\)/);
  });
});
