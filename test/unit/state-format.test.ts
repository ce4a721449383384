/**
 * The changelog's state format changed with contract rev 11 (format 3: lastEventAt, the evidence
 * head F, the coarsened set K, the contested flag). A changelog written before still restores:
 * test/fixtures/state-format-2.json holds a state serialized by the format-2 code (commit
 * 30abf30) and the events that made it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ContextEvent } from '../../src/engine';
import { Fleet } from '../../src/engine';
import { deserializeState, serializeState } from '../../src/engine/serialize';
import { withCanonicalRing } from '../../src/engine/sequence';
import { SessionBuilder } from '../support/sessionBuilder';
import { verdictOf } from '../support/engineHarness';
import { evolve } from '../../src/engine/evolve';
import { engineOptions } from '../../src/engine/fleet';

const fixture = JSON.parse(
  readFileSync(path.join(__dirname, '../fixtures/state-format-2.json'), 'utf8'),
) as { hex: string; events: ContextEvent[] };
const old = Buffer.from(fixture.hex, 'hex');

function replayed() {
  const fleet = new Fleet();
  for (const e of fixture.events) fleet.process(e, e.occurredAt);
  return fleet.get(fixture.events[0]!.sessionId)!;
}

describe('state format 2 (before rev 11) restores under format 3', () => {
  it('starts with format byte 2, and restores to what the events give now, with the new fields at their defaults', () => {
    expect(old[0]).toBe(2);
    const restored = deserializeState(old);
    const now = withCanonicalRing(replayed());
    expect(now.lastEventAt).not.toBeNull();
    expect(restored).toEqual({ ...now, lastEventAt: null });
    expect(restored).toMatchObject({ evidenceHead: null, coarsened: {}, contested: false });
  });

  it('a restored state decides the next request as the replayed one does, and is written back as format 3', () => {
    const b = new SessionBuilder('old-format', 1_767_225_600_000 + 60_000);
    b.next({ seq: fixture.events.filter((e) => e.seq !== null).length }).request(
      'r2',
      'TURNS',
      3,
      15,
      15,
    );
    const request = b.last;
    const options = engineOptions();
    const fromOld = evolve(deserializeState(old), request, 0, options);
    const fromNow = evolve(replayed(), request, 0, options);
    expect(verdictOf(fromOld)).toEqual(verdictOf(fromNow));
    expect(serializeState(fromOld.state!)[0]).toBe(4);
  });
});
