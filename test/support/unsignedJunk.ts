/**
 * Unsigned out-of-band junk (contract §4b): a loss acknowledgement with no signature, at the
 * top of the position range, that any producer could write. Under a key ring it fails the
 * authority check, so it may neither create a session nor mark one refused at capacity.
 */
import type { EngineInput } from '../../src/engine/evolve';

export const unsignedJunk = (sessionId: string): EngineInput => ({
  type: 'LossAcknowledged',
  sessionId,
  seq: null,
  eventId: `junk-${sessionId}`,
  occurredAt: 4_503_599_627_370_495,
  unit: 'TURNS',
  range: { start: 0, end: 4_503_599_627_370_495 },
  by: 'nobody',
  reason: 'junk',
  signature: null,
});
