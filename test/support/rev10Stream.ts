/**
 * A large generated stream of out-of-band events and hostile JSON, as the bytes of JSON lines:
 * the simulated fleet, where some spill answers come out of band (seq null, the orchestrator's
 * later seqs closing up behind them) and operators acknowledge losses out of band; redeliveries
 * of out-of-band events (within and beyond the window of 8); lines whose JSON repeats a key;
 * lines that are not valid UTF-8. Deterministic for a seed.
 */
import type { ContextEvent } from '../../src/engine/events';
import { Rng, generateFleetArray } from '../../src/sim';

export interface Rev10Line {
  /** The session the line belongs to (the Kafka key), also for the corrupted ones. */
  sessionId: string;
  bytes: Buffer;
  /** The event, for lines that are valid (those may go to Kafka as Avro instead). */
  event: ContextEvent | null;
}

export interface Rev10Counts {
  outOfBand: number;
  outOfBandRedeliveries: number;
  duplicateKeys: number;
  badUtf8: number;
}

/** The in-band events of one session after `index` move one seq down (the gap closes). */
function closeUp(events: ContextEvent[], from: number, sessionId: string): void {
  for (let j = from; j < events.length; j++) {
    const e = events[j]!;
    if (e.sessionId === sessionId && e.seq !== null)
      events[j] = { ...e, seq: e.seq - 1 } as ContextEvent;
  }
}

export function rev10Stream(
  seed: number,
  sessions: number,
  events: number,
): { lines: Rev10Line[]; counts: Rev10Counts } {
  const rng = new Rng(seed);
  const list = [...generateFleetArray({ sessions, events, seed, faultyShare: 0.4 }).events];
  const counts: Rev10Counts = {
    outOfBand: 0,
    outOfBandRedeliveries: 0,
    duplicateKeys: 0,
    badUtf8: 0,
  };
  // Spill answers from a separate spill service: out of band.
  for (let i = 0; i < list.length; i++) {
    const e = list[i]!;
    if ((e.type === 'SpillCompleted' || e.type === 'SpillFailed') && rng.chance(0.5)) {
      list[i] = { ...e, seq: null, eventId: `${e.eventId}-oob` };
      closeUp(list, i + 1, e.sessionId);
      counts.outOfBand++;
    }
  }
  // Operators acknowledging losses out of band, at random points of random sessions.
  const ids = [...new Set(list.map((e) => e.sessionId))];
  for (let k = 0; k < Math.ceil(sessions / 4); k++) {
    const at = rng.int(list.length);
    const sessionId = rng.pick(ids);
    list.splice(at, 0, {
      type: 'LossAcknowledged',
      sessionId,
      seq: null,
      eventId: `ack-${k}`,
      occurredAt: list[Math.min(at, list.length - 1)]!.occurredAt,
      unit: rng.pick(['TURNS', 'TOKENS', 'MESSAGES'] as const),
      range: { start: 0, end: rng.int(40) },
      by: 'oncall@example.com',
      reason: `acknowledged in a drill (${k})`,
      signature: null,
    });
    counts.outOfBand++;
  }
  // Redeliveries of out-of-band events, some soon (a duplicate), some much later.
  const oob = list.map((e, i) => [e, i] as const).filter(([e]) => e.seq === null);
  for (const [e, i] of oob) {
    if (!rng.chance(0.3)) continue;
    list.splice(Math.min(list.length, i + 1 + rng.int(rng.chance(0.5) ? 5 : 400)), 0, e);
    counts.outOfBandRedeliveries++;
  }
  const lines: Rev10Line[] = list.map((event) => {
    const json = JSON.stringify(event);
    if (rng.chance(0.01)) {
      counts.duplicateKeys++;
      // The last field again with another value (which one counts is undefined: fail closed).
      return {
        sessionId: event.sessionId,
        bytes: Buffer.from(json.replace(/\}$/, ',"eventId":"x"}')),
        event: null,
      };
    }
    if (rng.chance(0.01)) {
      counts.badUtf8++;
      const bytes = Buffer.from(json);
      const at = bytes.indexOf('"eventId"') + 2;
      bytes[at] = 0xff; // never valid in UTF-8
      return { sessionId: event.sessionId, bytes, event: null };
    }
    return { sessionId: event.sessionId, bytes: Buffer.from(json), event };
  });
  return { lines, counts };
}
