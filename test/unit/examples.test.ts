import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { runAudit } from '../../src/cli/audit';
import { EXAMPLES, toJsonLines } from '../support/examples';

const DIR = path.resolve(__dirname, '../../examples');

async function audit(text: string, json = true): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await runAudit(Readable.from([text]), out, { json });
  return Buffer.concat(chunks).toString('utf8');
}

async function records(file: string): Promise<Record<string, unknown>[]> {
  const text = await audit(readFileSync(path.join(DIR, file), 'utf8'));
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('examples/', () => {
  it.each(Object.keys(EXAMPLES))('%s is the checked-in output of its generator', (file) => {
    const text = toJsonLines(EXAMPLES[file]!());
    if (process.env.UPDATE_EXAMPLES) writeFileSync(path.join(DIR, file), text);
    expect(readFileSync(path.join(DIR, file), 'utf8')).toBe(text);
  });

  it('seed-incident: REFUSE + SPILL, then APPROVE by LOSSLESS_SPILL after the spill, commit audited clean', async () => {
    const rs = await records('seed-incident.jsonl');
    const verdicts = rs.filter((r) => r.record === 'verdict');
    expect(verdicts.map((v) => [v.decision, v.action, v.basis])).toEqual([
      ['REFUSE', 'SPILL', null],
      ['APPROVE', 'NONE', 'LOSSLESS_SPILL'],
    ]);
    expect(rs.filter((r) => r.record === 'spill-request')).toHaveLength(1);
    expect(rs.filter((r) => r.record === 'audit').map((a) => a.code)).toEqual([
      'TRIGGER_NOT_BELOW_CEILING',
      'PINNED_EVICTED',
    ]);
  });

  it('well-behaved: every request approved with INVARIANT_HOLDS and no audit record', async () => {
    const rs = await records('well-behaved.jsonl');
    expect(rs.map((r) => [r.record, r.decision, r.basis])).toEqual([
      ['verdict', 'APPROVE', 'INVARIANT_HOLDS'],
      ['verdict', 'APPROVE', 'INVARIANT_HOLDS'],
    ]);
  });

  it('halt-then-acknowledge: HALT with spills disabled, then APPROVE by LOSS_ACKNOWLEDGED', async () => {
    const rs = await records('halt-then-acknowledge.jsonl');
    const verdicts = rs.filter((r) => r.record === 'verdict');
    expect(verdicts.map((v) => [v.decision, v.action, v.basis])).toEqual([
      ['REFUSE', 'HALT', null],
      ['APPROVE', 'NONE', 'LOSS_ACKNOWLEDGED'],
    ]);
    expect(String(verdicts[0]!.diagnostic)).toContain('spills are disabled');
    expect(rs.filter((r) => r.record === 'audit').map((a) => a.code)).toEqual([
      'PINNED_EVICTED',
      'LOSS_ACKNOWLEDGED',
    ]);
  });

  it('a replay of the same file is byte-identical', async () => {
    const text = readFileSync(path.join(DIR, 'seed-incident.jsonl'), 'utf8');
    expect(await audit(text)).toBe(await audit(text));
  });

  it('bad lines become dead-letter records with line number and reason, and the replay goes on', async () => {
    const good = readFileSync(path.join(DIR, 'well-behaved.jsonl'), 'utf8').split('\n');
    const text = [
      good[0],
      'not json',
      '',
      '{"type":"Nope","sessionId":"x"}',
      '{"type":"TurnAppended"}',
      ...good.slice(1),
    ].join('\n');
    const rs = (await audit(text))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const dead = rs.filter((r) => r.record === 'dead-letter');
    expect(dead.map((d) => [d.lineNumber, String(d.error).split(':')[0]])).toEqual([
      [2, 'NOT_JSON'],
      [4, 'UNKNOWN_TYPE'],
      [5, 'MISSING_FIELD'],
    ]);
    expect(rs.filter((r) => r.record === 'verdict')).toHaveLength(2);
  });

  it("the readable report counts decisions and reasons and names each refusal's holes", async () => {
    const report = await audit(readFileSync(path.join(DIR, 'seed-incident.jsonl'), 'utf8'), false);
    expect(report).toContain('REFUSE (SPILL): 1');
    expect(report).toContain('APPROVE: 1');
    expect(report).toContain('EVICTED_PINNED: 1');
    expect(report).toContain('EVICTED_UNCOVERED TURNS[0,8)');
  });
});
