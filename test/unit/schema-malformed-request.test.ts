/** contract §3: "a malformed CompactionRequested whose sessionId, seq and requestId decode is
 * dead-lettered and also answered ... requestedAt null if occurredAt does not decode". */
import { decodeEventAvro, decodeEventJson } from '../../src/schema/decodeEvent';
import { eventRecordType, eventUnionType, wrapEvent } from '../../src/schema/schemas';
import type { ContextEvent } from '../../src/engine/events';
import { SAMPLES, withFields } from './schema-fixtures';

describe('salvaging a malformed CompactionRequested', () => {
  it('returns the MalformedRequest with the error message', () => {
    const result = decodeEventJson(withFields('CompactionRequested', { unit: 'LINES' }));
    expect(result).toEqual({
      ok: false,
      error: expect.objectContaining({ code: 'BAD_ENUM', field: 'unit' }),
      request: {
        type: 'MalformedRequest',
        sessionId: 'session-1',
        seq: 3,
        requestId: 'request-1',
        eventId: 'event-3',
        occurredAt: 1_700_000_000_003,
        error: 'field "unit": expected one of TURNS, TOKENS, MESSAGES, got "LINES"',
      },
    });
  });

  it('salvages a request failing a semantic rule (reversed summaryInput)', () => {
    const input = withFields('CompactionRequested', { summaryInput: { start: 9, end: 2 } });
    expect(decodeEventJson(input)).toMatchObject({
      ok: false,
      error: { code: 'REVERSED_RANGE' },
      request: { requestId: 'request-1', seq: 3 },
    });
  });

  it.each([
    ['missing', undefined],
    ['a string', '2024-01-01'],
    ['negative', -1],
    ['fractional', 1.5],
  ])('sets occurredAt to null when it is %s', (_what, occurredAt) => {
    const result = decodeEventJson(withFields('CompactionRequested', { occurredAt }));
    expect(result).toMatchObject({ ok: false, request: { occurredAt: null } });
  });

  it.each([
    ['requestId is missing', { requestId: undefined }],
    ['requestId is not a string', { requestId: 12 }],
    ['sessionId is missing', { sessionId: undefined }],
    ['seq is negative', { seq: -1 }],
    ['seq is not an integer', { seq: 2.5 }],
    ['seq is a string', { seq: '3' }],
    ['seq is beyond what Avro carries', { seq: Number.MAX_SAFE_INTEGER }],
  ])('does not salvage when %s', (_what, changes) => {
    const result = decodeEventJson(withFields('CompactionRequested', changes));
    expect(result.ok).toBe(false);
    expect(result).not.toHaveProperty('request');
  });

  it('salvages only CompactionRequested', () => {
    const result = decodeEventJson(withFields('CompactionCommitted', { unit: 'LINES' }));
    expect(result).not.toHaveProperty('request');
  });

  it('salvages a request read from Avro that breaks a semantic rule', () => {
    const request = { ...SAMPLES.CompactionRequested.decoded, tailStart: -4 } as ContextEvent;
    // Encoded without our checks, as a foreign producer could.
    const body = eventUnionType.toBuffer(wrapEvent(request));
    expect(eventRecordType('CompactionRequested').isValid(request)).toBe(true);
    expect(decodeEventAvro(body)).toMatchObject({
      ok: false,
      error: { code: 'NEGATIVE_NUMBER', field: 'tailStart' },
      request: {
        sessionId: 'session-1',
        seq: 3,
        requestId: 'request-1',
        occurredAt: 1_700_000_000_003,
      },
    });
  });
});
