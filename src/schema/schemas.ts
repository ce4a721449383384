/**
 * The Avro schemas of `schemas/` (the product's public contract, contract §3 and §6), loaded
 * once as avsc `Type`s. The .avsc files are the single source of truth: the JSON decoder
 * validates against these types, and `src/engine/contract.ts` is generated from the files.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Type } from 'avsc';
import type { types } from 'avsc';
import { EVENT_TYPES } from '../engine/events';
import { untrustedTypeHook } from './untrustedTypes';
import type { ContextEvent, EventType } from '../engine/events';

/** What `Type.forSchema` accepts: schema JSON, or already parsed types (union branches). */
type AvroSchema = Parameters<typeof Type.forSchema>[0];

/** Two levels below the package root both as `src/schema` (ts-jest) and `dist/schema` (build). */
export const SCHEMA_DIR = path.resolve(__dirname, '../../schemas');

export const NAMESPACE = 'io.compactionguard.v1';

export type SchemaName = 'contextChangeEvent' | 'verdict' | 'spillRequest' | 'auditRecord';

export const SCHEMA_FILES: Readonly<Record<SchemaName, string>> = {
  contextChangeEvent: 'context-change-event.avsc',
  verdict: 'verdict.avsc',
  spillRequest: 'spill-request.avsc',
  auditRecord: 'audit-record.avsc',
};

function readSchemaFile(name: SchemaName): string {
  return fs.readFileSync(path.join(SCHEMA_DIR, SCHEMA_FILES[name]), 'utf8');
}

/** The schema texts as shipped, for registering in the schema registry. */
export const rawSchemas: Readonly<Record<SchemaName, string>> = {
  contextChangeEvent: readSchemaFile('contextChangeEvent'),
  verdict: readSchemaFile('verdict'),
  spillRequest: readSchemaFile('spillRequest'),
  auditRecord: readSchemaFile('auditRecord'),
};

/** The event union parsed: the wrapped union plus its branch records by event type. */
export interface EventSchema {
  union: Type;
  branches: ReadonlyMap<string, types.RecordType>;
}

/**
 * Parses a context-change-event schema (ours, or a writer's from the registry). The top-level
 * union is *wrapped* (`{"io.compactionguard.v1.TurnAppended": {...}}`): its branches are all
 * records, which avsc cannot tell apart unwrapped. Unions inside a record (`["null","long"]`)
 * are *unwrapped* (`null` or the number) so a branch's value is exactly the flat JSON event.
 */
export function parseEventSchema(schemaJson: string): EventSchema {
  const schema: unknown = JSON.parse(schemaJson);
  if (!Array.isArray(schema)) {
    throw new Error('context-change-event schema: expected a top-level union (JSON array)');
  }
  const registry: Record<string, Type> = {};
  const records = schema.map((branch: unknown) => {
    const type = Type.forSchema(branch as AvroSchema, {
      wrapUnions: 'never',
      registry,
      typeHook: untrustedTypeHook, // untrusted input: see untrustedTypes.ts
    });
    if (type.typeName !== 'record') {
      throw new Error(`context-change-event schema: branch ${type.name ?? '?'} is not a record`);
    }
    return type as types.RecordType;
  });
  const branches = new Map(records.map((r) => [shortName(r.name ?? ''), r] as const));
  return {
    union: Type.forSchema(records as unknown as AvroSchema, { wrapUnions: true }),
    branches,
  };
}

/** `io.compactionguard.v1.TurnAppended` → `TurnAppended`. */
export function shortName(fullName: string): string {
  return fullName.slice(fullName.lastIndexOf('.') + 1);
}

const eventSchema = parseEventSchema(rawSchemas.contextChangeEvent);

// Fail at load, not per event, if the schema and the engine's event list drift apart.
for (const type of EVENT_TYPES) {
  if (!eventSchema.branches.has(type)) {
    throw new Error(`context-change-event schema has no record for event type ${type}`);
  }
}
if (eventSchema.branches.size !== EVENT_TYPES.length) {
  throw new Error('context-change-event schema has records for unknown event types');
}

/** The Avro type of the `agent.context-changes` values: a wrapped union of nine records. */
export const eventUnionType: Type = eventSchema.union;

export function isEventType(name: string): name is EventType {
  return (EVENT_TYPES as readonly string[]).includes(name);
}

/** The branch record of one event type (the flat event's schema). */
export function eventRecordType(type: EventType): types.RecordType {
  const record = eventSchema.branches.get(type);
  if (record === undefined) throw new Error(`no schema for event type ${type}`); // checked at load
  return record;
}

/** The union value avsc encodes: the flat event under its branch's full name. */
export function wrapEvent(event: ContextEvent): Record<string, ContextEvent> {
  return { [`${NAMESPACE}.${event.type}`]: event };
}

/** Splits a decoded union value into its branch (short name) and the branch's record. */
export function unwrapEvent(value: unknown): { branch: string; record: unknown } {
  const entries = Object.entries(value as Record<string, unknown>);
  const [entry] = entries;
  if (entries.length !== 1 || entry === undefined) {
    throw new Error('a wrapped union value has exactly one branch');
  }
  return { branch: shortName(entry[0]), record: entry[1] };
}

function parseRecordSchema(name: SchemaName): types.RecordType {
  // Only `["null", T]` unions here: unwrapped, so a value is `null` or the T, as in outputs.ts.
  return Type.forSchema(JSON.parse(rawSchemas[name]) as AvroSchema, {
    wrapUnions: 'never',
  }) as types.RecordType;
}

/** `agent.compaction-verdicts` values (contract §6). */
export const verdictType: types.RecordType = parseRecordSchema('verdict');
/** `agent.spill-requests` values (contract §6). */
export const spillRequestType: types.RecordType = parseRecordSchema('spillRequest');
/** `compaction-guard.audit` values (contract §6). */
export const auditRecordType: types.RecordType = parseRecordSchema('auditRecord');
