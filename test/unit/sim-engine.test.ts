/** The fleet model run through the real engine: each profile gets the verdicts it is built for. */
import { Fleet } from '../../src/engine';
import type { AuditRecord, CompactionRequested, ContextEvent, Verdict } from '../../src/engine';
import { decodeEventJson } from '../../src/schema/decodeEvent';
import { assertCompactionSafe } from '../../bench/baseline';
import {
  type FleetOptions,
  OrchestratorModel,
  type SessionPlan,
  generateFleetArray,
  planSession,
} from '../../src/sim';

interface Run {
  events: ContextEvent[];
  plans: Map<string, SessionPlan>;
  verdicts: { event: CompactionRequested; verdict: Verdict; retry: boolean }[];
  audits: AuditRecord[];
}

function run(options: FleetOptions): Run {
  const { events, plans } = generateFleetArray(options);
  const fleet = new Fleet();
  const seen = new Set<string>();
  const out: Run = { events, plans, verdicts: [], audits: [] };
  for (const e of events) {
    const r = fleet.process(e, e.occurredAt);
    for (const o of r.outputs) {
      if (o.record === 'audit') out.audits.push(o.value);
      if (o.record === 'verdict' && e.type === 'CompactionRequested') {
        const key = `${e.sessionId}/${e.requestId}`;
        out.verdicts.push({ event: e, verdict: o.value, retry: seen.has(key) });
        seen.add(key);
      }
    }
  }
  return out;
}

const profileOf = (r: Run, sessionId: string) => r.plans.get(sessionId)!.profile;

describe('the fleet model through the engine (spillAck on)', () => {
  const r = run({ sessions: 400, events: 60_000, seed: 2024, faultyShare: 0.25 });
  const requestsOf = (profile: string) =>
    r.verdicts.filter((v) => profileOf(r, v.event.sessionId) === profile);

  it('never refuses a well-behaved session, and audits no violation for one', () => {
    const wb = requestsOf('well-behaved');
    expect(wb.length).toBeGreaterThan(500);
    const refused = wb.filter((v) => v.verdict.decision !== 'APPROVE');
    expect(refused.map((v) => v.verdict)).toEqual([]);
    const audits = r.audits.filter((a) => profileOf(r, a.sessionId) === 'well-behaved');
    expect(audits.map((a) => a.code)).toEqual([]);
  });

  it('refuses faulty sessions (the seed incident) and approves their retries after the spill or acknowledgement', () => {
    const faulty = requestsOf('faulty');
    const refused = faulty.filter((v) => v.verdict.decision === 'REFUSE');
    expect(refused.length).toBeGreaterThan(20);
    expect(refused.every((v) => !v.retry)).toBe(true);
    const codes = new Set(refused.flatMap((v) => v.verdict.reasons.map((x) => x.code)));
    expect(codes).toContain('EVICTED_PINNED');
    expect(codes).toContain('EVICTED_UNCOVERED');
    const retries = faulty.filter((v) => v.retry);
    expect(retries.length).toBeGreaterThanOrEqual(refused.length);
    expect(retries.filter((v) => v.verdict.decision !== 'APPROVE')).toEqual([]);
    const bases = new Set(retries.map((v) => v.verdict.basis));
    expect(bases).toContain('LOSS_ACKNOWLEDGED');
    expect([...bases].some((b) => b === 'LOSSLESS_SPILL' || b === 'INVARIANT_HOLDS')).toBe(true);
  });

  it('every faulty STRICT session that asked to compact was refused at its first request', () => {
    const first = new Map<string, Verdict>();
    for (const v of requestsOf('faulty')) {
      if (!first.has(v.event.sessionId)) first.set(v.event.sessionId, v.verdict);
    }
    expect(first.size).toBeGreaterThan(10);
    for (const [sessionId, verdict] of first) {
      if (r.plans.get(sessionId)!.policy.coverage === 'STRICT')
        expect(verdict.decision).toBe('REFUSE');
    }
  });

  it('faulty sessions with spillAck commit only approved compactions and complete every spill asked for', () => {
    const violations = r.audits.filter((a) => a.kind === 'VIOLATION');
    expect(violations.map((a) => `${a.code} ${a.sessionId}`)).toEqual([]);
    const advisories = new Set(r.audits.map((a) => a.code));
    expect(advisories).toContain('TRIGGER_NOT_BELOW_CEILING');
    expect(advisories).toContain('PINNED_EVICTED');
    expect(advisories).toContain('LOSS_ACKNOWLEDGED');
  });

  it('every event decodes (no dead letters) and decodes to itself', () => {
    // Every event but TurnAppended, and every 10th of those (decoding is the slow part).
    const sample = r.events.filter((e, i) => e.type !== 'TurnAppended' || i % 10 === 0);
    expect(new Set(sample.map((e) => e.type)).size).toBe(8);
    for (const e of sample) {
      const d = decodeEventJson(JSON.parse(JSON.stringify(e)));
      if (!d.ok) throw new Error(`${JSON.stringify(e)}: ${JSON.stringify(d.error)}`);
      expect(d.event).toEqual(e);
    }
  });
});

describe("the seed's own check on the same requests", () => {
  const r = run({ sessions: 300, events: 40_000, seed: 31, faultyShare: 0.3, spillAck: false });
  // Per request: the seed's verdict from the session's truncation log, and whether a spill or
  // an acknowledgement came before it in its session.
  const seedRefuses = new Map<string, boolean>();
  const logs = new Map<string, [number, number][]>();
  const healed = new Set<string>();
  for (const e of r.events) {
    if (e.type === 'Truncated') {
      const log = logs.get(e.sessionId) ?? [];
      log.push([e.range.start, e.range.end]);
      logs.set(e.sessionId, log);
    }
    if (e.type === 'SpillCompleted' || e.type === 'LossAcknowledged') healed.add(e.sessionId);
    if (e.type === 'CompactionRequested') {
      const p = r.plans.get(e.sessionId)!.policy;
      const refused =
        assertCompactionSafe(
          e.summaryInput.start,
          e.tailStart,
          p.floor.span,
          logs.get(e.sessionId) ?? [],
          p.floor.unit,
          p.truncatorUnit,
        ) !== null;
      seedRefuses.set(`${e.sessionId}/${e.seq}`, refused && !healed.has(e.sessionId));
    }
  }

  it('never refuses a well-behaved request', () => {
    const refused = r.verdicts.filter(
      (v) =>
        profileOf(r, v.event.sessionId) === 'well-behaved' &&
        seedRefuses.get(`${v.event.sessionId}/${v.event.seq}`),
    );
    expect(refused).toEqual([]);
  });

  it('refuses some faulty requests, and the engine refuses every one of them too (contract §5, conformance)', () => {
    const bySeed = r.verdicts.filter((v) => seedRefuses.get(`${v.event.sessionId}/${v.event.seq}`));
    expect(bySeed.length).toBeGreaterThan(10);
    expect(bySeed.filter((v) => v.verdict.decision !== 'REFUSE')).toEqual([]);
  });
});

describe('well-behaved sessions across seeds', () => {
  it.each([1, 2, 3, 4])('are never refused (seed %i, long sessions)', (seed) => {
    const r = run({ sessions: 60, events: 15_000, seed, faultyShare: 0 });
    expect(r.verdicts.length).toBeGreaterThan(150);
    expect(r.verdicts.filter((v) => v.verdict.decision !== 'APPROVE')).toEqual([]);
    expect(r.audits).toEqual([]);
  });
});

describe('faulty sessions without spillAck', () => {
  it('are refused and commit anyway: the engine reports COMMITTED_WITHOUT_APPROVAL', () => {
    const r = run({ sessions: 200, events: 30_000, seed: 7, faultyShare: 0.5, spillAck: false });
    expect(r.events.some((e) => e.type === 'SpillCompleted' || e.type === 'LossAcknowledged')).toBe(
      false,
    );
    const faultyRefused = r.verdicts.filter(
      (v) => profileOf(r, v.event.sessionId) === 'faulty' && v.verdict.decision === 'REFUSE',
    );
    expect(faultyRefused.length).toBeGreaterThan(20);
    const wbRefused = r.verdicts.filter(
      (v) => profileOf(r, v.event.sessionId) === 'well-behaved' && v.verdict.decision === 'REFUSE',
    );
    expect(wbRefused).toEqual([]);
    // Each refused request is committed anyway (unless the stream ended before its commit).
    const commits = new Set(
      r.events.flatMap((e) =>
        e.type === 'CompactionCommitted' ? [`${e.sessionId}/${e.requestId}`] : [],
      ),
    );
    const committedRefusals = faultyRefused.filter((v) =>
      commits.has(`${v.event.sessionId}/${v.event.requestId}`),
    );
    const unapproved = r.audits.filter((a) => a.code === 'COMMITTED_WITHOUT_APPROVAL');
    expect(unapproved.length).toBe(committedRefusals.length);
    expect(committedRefusals.length).toBeGreaterThan(faultyRefused.length - 5);
    expect(unapproved.every((a) => profileOf(r, a.sessionId) === 'faulty')).toBe(true);
  });
});

describe('OrchestratorModel on its own', () => {
  it.each(['TURNS', 'TOKENS', 'MESSAGES'] as const)(
    'a long well-behaved session in %s is approved at every compaction, with no audit record but the advisory that its sets were bounded',
    (unit) => {
      let plan: SessionPlan | null = null;
      for (let seed = 1; plan === null; seed++) {
        const p = planSession({
          sessionId: `solo-${unit}`,
          seed,
          faultyShare: 0,
          spillAck: true,
          closeShare: 0,
        });
        if (p.policy.floor.unit === unit) plan = p;
      }
      const model = new OrchestratorModel(plan);
      const fleet = new Fleet();
      let approved = 0;
      for (let i = 0; i < 12_000; i++) {
        const e = model.next(1_767_225_600_000 + i)!;
        for (const o of fleet.process(e, e.occurredAt).outputs) {
          // A long session's pins or T may pass 128 ranges: bounded (contract §4a), never refused for it.
          if (o.record === 'audit' && o.value.code !== 'STATE_COARSENED')
            throw new Error(`${o.value.code}: ${o.value.message}`);
          if (o.record === 'verdict') {
            expect(o.value.decision).toBe('APPROVE');
            approved++;
          }
        }
      }
      expect(approved).toBe(model.counts.requests);
      expect(approved).toBeGreaterThan(10);
      expect(model.counts.truncations).toBeGreaterThan(0);
    },
  );
});
