/** BACKWARD compatibility (schemas/README.md): each schema reads data written by itself, and
 * the checker used for future versions tells allowed changes from breaking ones. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Type } from 'avsc';
import { EVENT_TYPES } from '../../src/engine/events';
import { backwardIncompatibility } from '../../src/schema/compat';
import {
  auditRecordType,
  eventUnionType,
  parseEventSchema,
  rawSchemas,
  spillRequestType,
  verdictType,
  wrapEvent,
} from '../../src/schema/schemas';
import type { SchemaName } from '../../src/schema/schemas';
import { AUDIT_RECORD, SAMPLES, SPILL_REQUEST, VERDICT } from './schema-fixtures';

interface RecordSchema {
  name: string;
  fields: Array<{ name: string; type: unknown; default?: unknown; doc?: string }>;
}

type AvroSchema = Parameters<typeof Type.forSchema>[0];

const names: SchemaName[] = ['contextChangeEvent', 'verdict', 'spillRequest', 'auditRecord'];

describe('each schema reads data written by itself', () => {
  it.each(names)('%s resolves against itself', (name) => {
    expect(backwardIncompatibility(rawSchemas[name], rawSchemas[name])).toBeNull();
  });

  it.each(EVENT_TYPES)(
    'a %s written by the event schema reads back through its resolver',
    (type) => {
      const writer = parseEventSchema(rawSchemas.contextChangeEvent).union;
      const body = writer.toBuffer(wrapEvent(SAMPLES[type].decoded));
      const read = eventUnionType.fromBuffer(body, eventUnionType.createResolver(writer));
      expect(JSON.parse(JSON.stringify(read))).toEqual(
        JSON.parse(JSON.stringify(wrapEvent(SAMPLES[type].decoded))),
      );
    },
  );

  it.each([
    ['verdict', verdictType, VERDICT],
    ['spillRequest', spillRequestType, SPILL_REQUEST],
    ['auditRecord', auditRecordType, AUDIT_RECORD],
  ] as const)('a %s written by its schema reads back through its resolver', (name, type, value) => {
    const writer = Type.forSchema(JSON.parse(rawSchemas[name]) as AvroSchema, {
      wrapUnions: 'never',
    });
    const read: unknown = type.fromBuffer(writer.toBuffer(value), type.createResolver(writer));
    expect({ ...(read as object) }).toEqual(value);
  });
});

describe('the checker for future versions', () => {
  const current = rawSchemas.verdict;
  const evolve = (change: (schema: RecordSchema) => void): string => {
    const schema = JSON.parse(current) as RecordSchema;
    change(schema);
    return JSON.stringify(schema);
  };

  it('accepts a new field with a default', () => {
    const next = evolve((s) => {
      s.fields.push({ name: 'region', type: ['null', 'string'], default: null, doc: 'new' });
    });
    expect(backwardIncompatibility(next, current)).toBeNull();
  });

  it('rejects a new field without a default', () => {
    const next = evolve((s) => s.fields.push({ name: 'region', type: 'string', doc: 'new' }));
    expect(backwardIncompatibility(next, current)).toMatch(/default-less .*region/);
  });

  it('accepts a removed field (the new reader skips it)', () => {
    const next = evolve((s) => {
      s.fields = s.fields.filter((f) => f.name !== 'engineVersion');
    });
    expect(backwardIncompatibility(next, current)).toBeNull();
  });

  it('accepts a new enum symbol and rejects a removed one', () => {
    const decision = (symbols: string[]) =>
      evolve((s) => {
        const field = s.fields.find((f) => f.name === 'decision');
        if (field) field.type = { type: 'enum', name: 'Decision', symbols };
      });
    expect(backwardIncompatibility(decision(['APPROVE', 'REFUSE', 'DEFER']), current)).toBeNull();
    expect(backwardIncompatibility(decision(['APPROVE']), current)).not.toBeNull();
  });

  it('accepts a new event type in the union and rejects a removed one', () => {
    const events = JSON.parse(rawSchemas.contextChangeEvent) as RecordSchema[];
    const added = [...events, { type: 'record', name: 'io.compactionguard.v1.Paused', fields: [] }];
    const removed = events.filter((e) => e.name !== 'SessionClosed');
    const text = rawSchemas.contextChangeEvent;
    expect(backwardIncompatibility(JSON.stringify(added), text)).toBeNull();
    expect(backwardIncompatibility(JSON.stringify(removed), text)).not.toBeNull();
  });
});

describe('the schemas against an older release (test/fixtures/schemas-rev9)', () => {
  const fixture = (file: string) =>
    readFileSync(path.resolve(__dirname, '../fixtures/schemas-rev9', file), 'utf8');

  it('the event union with an optional seq on the out-of-band events reads the old one', () => {
    expect(
      backwardIncompatibility(rawSchemas.contextChangeEvent, fixture('context-change-event.avsc')),
    ).toBeNull();
  });

  it('the audit record with a nullable inputSeq reads the old one', () => {
    expect(
      backwardIncompatibility(rawSchemas.auditRecord, fixture('audit-record.avsc')),
    ).toBeNull();
  });

  it('the old event union could not read an out-of-band event (why consumers upgrade first)', () => {
    expect(
      backwardIncompatibility(fixture('context-change-event.avsc'), rawSchemas.contextChangeEvent),
    ).not.toBeNull();
  });
});
