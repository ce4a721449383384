/** contract §3: every event type decodes from its smallest valid JSON, defaults applied. */
import { EVENT_TYPES } from '../../src/engine/events';
import { decodeEventJson, decodeEventLine } from '../../src/schema/decodeEvent';
import { SAMPLES, withFields } from './schema-fixtures';

describe('decodeEventJson on valid input', () => {
  it.each(EVENT_TYPES)('decodes a minimal %s with its defaults applied', (type) => {
    const sample = SAMPLES[type];
    expect(decodeEventJson(sample.minimal)).toEqual({ ok: true, event: sample.decoded });
  });

  it.each(EVENT_TYPES)('decodes a %s given with every field equal to itself', (type) => {
    const decoded = SAMPLES[type].decoded;
    expect(decodeEventJson(structuredClone(decoded))).toEqual({ ok: true, event: decoded });
  });

  it('keeps given values over defaults', () => {
    const result = decodeEventJson(
      withFields('TurnAppended', { pins: ['CONSTRAINT', 'PLAN'], role: 'TOOL_RESULT' }),
    );
    expect(result).toMatchObject({ ok: true, event: { pins: ['CONSTRAINT', 'PLAN'] } });
    const request = decodeEventJson(
      withFields('CompactionRequested', { occupancyTokens: 163_000 }),
    );
    expect(request).toMatchObject({ ok: true, event: { occupancyTokens: 163_000 } });
    const truncated = decodeEventJson(withFields('Truncated', { reason: 'SUMMARY_EVICTED' }));
    expect(truncated).toMatchObject({ ok: true, event: { reason: 'SUMMARY_EVICTED' } });
  });

  it('accepts an explicit null occupancyTokens (the field is ["null","long"])', () => {
    const result = decodeEventJson(withFields('CompactionRequested', { occupancyTokens: null }));
    expect(result).toMatchObject({ ok: true, event: { occupancyTokens: null } });
  });

  it('applies defaults inside nested records (policy.coverage, policy.spill)', () => {
    const result = decodeEventJson(SAMPLES.SessionOpened.minimal);
    expect(result).toMatchObject({
      ok: true,
      event: { policy: { coverage: 'STRICT', spill: 'ENABLED' } },
    });
  });

  it('ignores fields the schema does not declare, at any depth (forward compatibility)', () => {
    const input = withFields('Truncated', {
      addedInV2: 'whatever',
      range: { start: 0, end: 8, note: 'extra' },
    });
    expect(decodeEventJson(input)).toEqual({ ok: true, event: SAMPLES.Truncated.decoded });
  });

  it('accepts empty ranges outside TurnAppended and zero everywhere', () => {
    const input = withFields('Truncated', { seq: 0, occurredAt: 0, range: { start: 0, end: 0 } });
    expect(decodeEventJson(input)).toMatchObject({
      ok: true,
      event: { range: { start: 0, end: 0 } },
    });
  });

  it('does not mutate its input', () => {
    const input = withFields('TurnAppended', {});
    const before = structuredClone(input);
    decodeEventJson(input);
    expect(input).toEqual(before);
  });

  it('decodes a JSON line', () => {
    const line = JSON.stringify(SAMPLES.SessionClosed.minimal);
    expect(decodeEventLine(line)).toEqual({ ok: true, event: SAMPLES.SessionClosed.decoded });
  });
});
