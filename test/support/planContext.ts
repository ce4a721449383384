/** A batch planner's context for unit tests (src/kafka/batch/plan.ts `PlanContext`), without Kafka. */
import { engineOptions } from '../../src/engine';
import type { OutputEncoder, PlanConfig, PlanContext } from '../../src/kafka/batch/plan';
import { SessionStates } from '../../src/kafka/sessionStates';
import { auditRecordType, spillRequestType, verdictType } from '../../src/schema/schemas';

export const PLAN_CONFIG: PlanConfig = {
  inputFormat: 'json',
  verdictTopic: 'verdicts',
  spillTopic: 'spills',
  auditTopic: 'audits',
  dlqTopic: 'dlq',
  changelogTopic: 'changelog',
};

/** The outputs' Avro bodies, as the registry codec writes them after its 5-byte header. */
export const AVRO_BODIES: OutputEncoder = {
  encodeVerdict: (v) => verdictType.toBuffer(v),
  encodeSpillRequest: (r) => spillRequestType.toBuffer(r),
  encodeAudit: (a) => auditRecordType.toBuffer(a),
};

export const DECIDED_AT = 1_767_300_000_000;

/** No committed session, the default engine options, a fixed clock; `overrides` win. */
export function planContext(overrides: Partial<PlanContext> = {}): PlanContext {
  return {
    config: PLAN_CONFIG,
    encoder: AVRO_BODIES,
    engine: engineOptions(),
    committed: new SessionStates(),
    clock: () => DECIDED_AT,
    timer: () => 0,
    ...overrides,
  };
}
