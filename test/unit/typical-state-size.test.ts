/**
 * The typical session's serialized state size (bench/typical.ts; `npm run bench:engine` prints
 * it as "state bytes ... typical session") is quoted in several documents: every quote must be
 * the size the code produces now.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { typicalSession } from '../../bench/typical';
import { Fleet } from '../../src/engine';
import { serializeState } from '../../src/engine/serialize';

const ROOT = path.resolve(__dirname, '../..');
const DOCS = ['docs/architecture.md', 'bench/README.md', 'docs/decisions.md'];
/**
 * "465 B serialized", the bench page's "serialized state of the typical session: **465 B**", or
 * its targets row "serialized state ≤ 1 KiB per typical session | 465 B".
 */
const QUOTE =
  /(\d+) B\*{0,2} serialized|serialized state of the typical session: \*\*(\d+) B|serialized state ≤ 1 KiB per typical session \| (\d+) B/g;

describe('the typical state size quoted in the docs', () => {
  const { events } = typicalSession();
  const fleet = new Fleet();
  for (const e of events) fleet.process(e, e.occurredAt);
  const bytes = serializeState(fleet.get(events[0]!.sessionId)!).length;

  it('is the measured one everywhere', () => {
    const quotes = DOCS.flatMap((doc) =>
      [...readFileSync(path.join(ROOT, doc), 'utf8').matchAll(QUOTE)].map((m) => ({
        doc,
        bytes: Number(m[1] ?? m[2] ?? m[3]),
      })),
    );
    expect(new Set(quotes.map((q) => q.doc))).toEqual(new Set(DOCS));
    for (const q of quotes) expect(q).toEqual({ doc: q.doc, bytes });
  });
});
