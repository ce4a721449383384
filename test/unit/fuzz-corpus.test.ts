/**
 * Every case of the fuzz corpus (test/fuzz/corpus/: the poison records of the bounds review and
 * whatever `npm run fuzz` found) through the fuzz target: no crash, no output over 64 KiB, no
 * bound let through, no range set over 128 ranges, and each record's expectation (its dead
 * letter's code, its verdicts).
 */
import { type Output } from '../../src/engine';
import { caseOf, readCorpus, bytesOf, specOf } from '../fuzz/corpus';
import { runCase } from '../fuzz/pipeline';

const decisions = (outputs: readonly Output[]) =>
  outputs.flatMap((o) => (o.record === 'verdict' ? [o.value.decision] : []));

describe('the fuzz corpus replays through the target without a finding', () => {
  const corpus = readCorpus();

  test('holds the four poison records of the bounds review', () => {
    const names = corpus.map((c) => c.name);
    for (const poison of [
      'poison-deep-nesting.json',
      'poison-huge-turn-json.json',
      'poison-huge-request-id.json',
      'poison-huge-key.json',
    ]) {
      expect(names).toContain(poison);
    }
  });

  test.each(corpus.map((c) => [c.name, c.file] as const))('%s', async (_name, file) => {
    const outcomes = await runCase(caseOf(file));
    file.records.forEach((r, i) => {
      const outcome = outcomes[i]!;
      if (r.expect?.deadLetter !== undefined) expect(outcome.deadLetter).toBe(r.expect.deadLetter);
      if (r.expect?.verdicts !== undefined)
        expect(decisions(outcome.outputs)).toEqual(r.expect.verdicts);
    });
  });
});

describe('corpus byte specs', () => {
  test('fold long runs and read back the same bytes', () => {
    const bytes = Buffer.from(`{"a":"${'x'.repeat(1000)}é${'['.repeat(70)}"}`);
    const spec = specOf(bytes);
    expect(JSON.stringify(spec).length).toBeLessThan(100);
    expect(bytesOf(spec)).toEqual(bytes);
  });

  test('keep bytes that are not UTF-8 as base64', () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x00]);
    expect(specOf(bytes)).toEqual({ base64: bytes.toString('base64') });
    expect(bytesOf(specOf(bytes))).toEqual(bytes);
  });
});
