/** contract §6: the engine's output records are valid values of their published schemas. */
import type { types } from 'avsc';
import { auditRecordType, spillRequestType, verdictType } from '../../src/schema/schemas';
import { findInvalid } from '../../src/schema/validate';
import { APPROVAL, AUDIT_RECORD, SPILL_REQUEST, VERDICT } from './schema-fixtures';

const cases: Array<[string, types.RecordType, object]> = [
  ['a refusing verdict', verdictType, VERDICT],
  ['an approving verdict (null basis fields filled)', verdictType, APPROVAL],
  ['a spill request', spillRequestType, SPILL_REQUEST],
  ['an audit record', auditRecordType, AUDIT_RECORD],
  ['an audit record naming a request', auditRecordType, { ...AUDIT_RECORD, requestId: 'r-9' }],
];

describe('output records against their schemas', () => {
  it.each(cases)('%s is valid and roundtrips through Avro', (_what, type, value) => {
    expect(findInvalid(type, value)).toBeUndefined();
    expect(type.isValid(value, { noUndeclaredFields: true })).toBe(true);
    expect({ ...type.fromBuffer(type.toBuffer(value)) }).toEqual(value);
  });

  it('rejects a verdict with a rule code outside RuleCode, naming the path', () => {
    const bad = { ...VERDICT, rulesChecked: ['EVENT_GAP', 'VIBES'] };
    expect(findInvalid(verdictType, bad)).toMatchObject({
      code: 'BAD_ENUM',
      field: 'rulesChecked[1]',
    });
  });

  it('rejects a spill request without requestedAt (never null, contract §5)', () => {
    const bad = { ...SPILL_REQUEST, requestedAt: null };
    expect(findInvalid(spillRequestType, bad)).toMatchObject({
      code: 'WRONG_TYPE',
      field: 'requestedAt',
    });
  });

  it('rejects an audit record hole without a unit', () => {
    const bad = { ...AUDIT_RECORD, ranges: [{ start: 0, end: 8 }] };
    expect(findInvalid(auditRecordType, bad)).toMatchObject({
      code: 'MISSING_FIELD',
      field: 'ranges[0].unit',
    });
  });
});
