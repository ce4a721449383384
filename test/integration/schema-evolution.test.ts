/**
 * Every schema change must be BACKWARD compatible (consumers on the new schema read everything
 * written with the old), proven here by the real registry's own compatibility check, with the
 * previous release's schema registered first, exactly as a deployed subject holds it:
 * - contract rev 10 (test/fixtures/schemas-rev9/ before it): `seq` became optional (null
 *   default) on SpillCompleted, SpillFailed and LossAcknowledged, and the audit record's
 *   `inputSeq` became nullable;
 * - contract rev 11 (test/fixtures/schemas-rev10/ before it): the optional `signature` (null
 *   default) on the same three events (§4b), and the audit codes UNAUTHORIZED_EVENT and
 *   STATE_COARSENED;
 * - contract rev 12 (test/fixtures/schemas-rev11/ before it): the nullable `requestEventId` (null
 *   default) on the verdict and the spill request (§6).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Type } from 'avsc';
import { rawSchemas } from '../../src/schema/schemas';
import { serviceEnv } from './env';

const FIXTURES = path.resolve(__dirname, '../fixtures/schemas-rev9');
const REV10 = path.resolve(__dirname, '../fixtures/schemas-rev10');
const REV11 = path.resolve(__dirname, '../fixtures/schemas-rev11');
const HEADERS = { 'Content-Type': 'application/vnd.schemaregistry.v1+json' };

async function call(url: string, method: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method,
    headers: HEADERS,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok && res.status !== 409)
    throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return { status: res.status, ...json };
}

/** A fresh subject at BACKWARD holding `old`; then the registry's verdict on `next`. */
async function compatibleAfter(old: string, next: string, name: string) {
  const { registryUrl } = serviceEnv();
  const subject = `schema-evolution-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}-value`;
  const base = `${registryUrl}/subjects/${encodeURIComponent(subject)}`;
  await call(`${registryUrl}/config/${encodeURIComponent(subject)}`, 'PUT', {
    compatibility: 'BACKWARD',
  });
  const first = await call(`${base}/versions`, 'POST', { schema: old, schemaType: 'AVRO' });
  expect(typeof first.id).toBe('number');
  const check = await call(
    `${registryUrl}/compatibility/subjects/${encodeURIComponent(subject)}/versions/latest`,
    'POST',
    {
      schema: next,
      schemaType: 'AVRO',
    },
  );
  const registered = await call(`${base}/versions`, 'POST', { schema: next, schemaType: 'AVRO' });
  return {
    compatible: check.is_compatible,
    registered: registered.status === 200,
    old: first.id,
    next: registered.id,
  };
}

const oldEvent = readFileSync(path.join(FIXTURES, 'context-change-event.avsc'), 'utf8');
const oldAudit = readFileSync(path.join(FIXTURES, 'audit-record.avsc'), 'utf8');

describe('rev 10 schema evolution against the real registry (BACKWARD)', () => {
  test('the event union with optional seq on the out-of-band events is accepted after the old union', async () => {
    const r = await compatibleAfter(oldEvent, rawSchemas.contextChangeEvent, 'event');
    expect(r).toMatchObject({ compatible: true, registered: true });
    expect(r.next).not.toBe(r.old);
  });

  test('the audit record with a nullable inputSeq is accepted after the old record', async () => {
    const r = await compatibleAfter(oldAudit, rawSchemas.auditRecord, 'audit');
    expect(r).toMatchObject({ compatible: true, registered: true });
    expect(r.next).not.toBe(r.old);
  });

  test('the check can fail: making seq a string on SpillCompleted is refused after the old union', async () => {
    const broken = JSON.parse(rawSchemas.contextChangeEvent) as {
      name: string;
      fields: { name: string; type: unknown; default?: unknown }[];
    }[];
    const spill = broken.find((r) => r.name === 'SpillCompleted')!;
    const seq = spill.fields.find((f) => f.name === 'seq')!;
    seq.type = 'string';
    delete seq.default;
    const r = await compatibleAfter(oldEvent, JSON.stringify(broken), 'broken');
    expect(r).toMatchObject({ compatible: false, registered: false });
  });
});

const rev10Event = readFileSync(path.join(REV10, 'context-change-event.avsc'), 'utf8');
const rev10Audit = readFileSync(path.join(REV10, 'audit-record.avsc'), 'utf8');

describe('rev 11 schema evolution against the real registry (BACKWARD)', () => {
  test('the event union with an optional signature on SpillCompleted, SpillFailed and LossAcknowledged is accepted after the rev 10 union', async () => {
    const r = await compatibleAfter(rev10Event, rawSchemas.contextChangeEvent, 'signature');
    expect(r).toMatchObject({ compatible: true, registered: true });
    expect(r.next).not.toBe(r.old);
  });

  test('the audit record with the codes UNAUTHORIZED_EVENT and STATE_COARSENED is accepted after the rev 10 record', async () => {
    const r = await compatibleAfter(rev10Audit, rawSchemas.auditRecord, 'audit-rev11');
    expect(r).toMatchObject({ compatible: true, registered: true });
    expect(r.next).not.toBe(r.old);
  });

  test('the check can fail: a signature with no default is refused after the rev 10 union', async () => {
    const broken = JSON.parse(rawSchemas.contextChangeEvent) as {
      name: string;
      fields: { name: string; type: unknown; default?: unknown }[];
    }[];
    const ack = broken.find((r) => r.name === 'LossAcknowledged')!;
    delete ack.fields.find((f) => f.name === 'signature')!.default;
    const r = await compatibleAfter(rev10Event, JSON.stringify(broken), 'signature-broken');
    expect(r).toMatchObject({ compatible: false, registered: false });
  });

  test('a LossAcknowledged written with the rev 10 schema reads with the new one as unsigned (signature null)', () => {
    // The union of records as a wrapped union (as the processor reads it, src/schema/schemas.ts).
    const writer = Type.forSchema(JSON.parse(rev10Event) as never, { wrapUnions: true });
    const reader = Type.forSchema(JSON.parse(rawSchemas.contextChangeEvent) as never, {
      wrapUnions: true,
    });
    const old = {
      type: 'LossAcknowledged',
      sessionId: 's-1',
      seq: null,
      eventId: 'e-1',
      occurredAt: 1,
      unit: 'TURNS',
      range: { start: 0, end: 8 },
      by: 'oncall',
      reason: 'written before rev 11',
    };
    const branch = 'io.compactionguard.v1.LossAcknowledged';
    const bytes = writer.toBuffer({ [branch]: old });
    const read = (
      reader.fromBuffer(bytes, reader.createResolver(writer)) as Record<string, unknown>
    )[branch];
    expect(read).toMatchObject({ ...old, signature: null });
  });
});

const rev11Verdict = readFileSync(path.join(REV11, 'verdict.avsc'), 'utf8');
const rev11SpillRequest = readFileSync(path.join(REV11, 'spill-request.avsc'), 'utf8');

describe('rev 12 schema evolution against the real registry (BACKWARD)', () => {
  test('the verdict with a nullable requestEventId is accepted after the rev 11 verdict', async () => {
    const r = await compatibleAfter(rev11Verdict, rawSchemas.verdict, 'verdict-rev12');
    expect(r).toMatchObject({ compatible: true, registered: true });
    expect(r.next).not.toBe(r.old);
  });

  test('the spill request with a nullable requestEventId is accepted after the rev 11 spill request', async () => {
    const r = await compatibleAfter(rev11SpillRequest, rawSchemas.spillRequest, 'spill-rev12');
    expect(r).toMatchObject({ compatible: true, registered: true });
    expect(r.next).not.toBe(r.old);
  });

  test('the check can fail: a requestEventId with no default is refused after the rev 11 verdict', async () => {
    const broken = JSON.parse(rawSchemas.verdict) as {
      fields: { name: string; type: unknown; default?: unknown }[];
    };
    const field = broken.fields.find((f) => f.name === 'requestEventId')!;
    field.type = 'string';
    delete field.default;
    const r = await compatibleAfter(rev11Verdict, JSON.stringify(broken), 'verdict-broken');
    expect(r).toMatchObject({ compatible: false, registered: false });
  });

  test('a verdict written with the rev 11 schema reads with the new one with requestEventId null', () => {
    const writer = Type.forSchema(JSON.parse(rev11Verdict) as never);
    const reader = Type.forSchema(JSON.parse(rawSchemas.verdict) as never);
    const old = {
      sessionId: 's-1',
      requestId: 'r-1',
      decision: 'APPROVE',
      basis: 'INVARIANT_HOLDS',
      action: 'NONE',
      reasons: [],
      rulesChecked: ['UNKNOWN_SESSION'],
      diagnostic: null,
      spillRequestId: null,
      inputSeq: 3,
      requestedAt: 5,
      decidedAt: 6,
      engineVersion: 'compaction-guard-engine/2.0.0',
    };
    const read = reader.fromBuffer(writer.toBuffer(old), reader.createResolver(writer));
    expect(read).toMatchObject({ ...old, requestEventId: null });
  });
});
