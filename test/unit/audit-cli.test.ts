/**
 * `audit` on real files (contract §7): byte-order marks, invalid UTF-8 and repeated keys decided
 * exactly as on Kafka, several files as one stream, directories and closed pipes, and input that
 * would drive the terminal.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { InputError, openInputs, runAudit } from '../../src/cli/audit';
import { decodeRecordNow } from '../../src/kafka/records';
import { seedIncidentExample } from '../support/examples';
import { SessionBuilder } from '../support/sessionBuilder';
import { policyIn } from '../support/engineHarness';

const ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(ROOT, 'bin/compaction-guard.js');
const SEED = path.join(ROOT, 'examples/seed-incident.jsonl');

type Row = Record<string, unknown>;

async function auditBytes(...files: Buffer[]): Promise<Row[]> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const inputs = files.map((bytes, i) => ({ name: `f${i}`, stream: Readable.from([bytes]) }));
  await runAudit(inputs, out, { json: true });
  const text = Buffer.concat(chunks).toString('utf8').trim();
  return text === '' ? [] : text.split('\n').map((l) => JSON.parse(l) as Row);
}

const lines = (events: readonly object[]) =>
  Buffer.from(events.map((e) => JSON.stringify(e)).join('\n') + '\n');

describe('audit: bytes decided as on Kafka', () => {
  it('skips a UTF-8 byte-order mark at the start of the file: the first event is not lost', async () => {
    const plain = lines(seedIncidentExample());
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), plain]);
    expect(await auditBytes(withBom)).toEqual(await auditBytes(plain));
    expect((await auditBytes(withBom)).filter((r) => r.record === 'dead-letter')).toEqual([]);
  });

  it('a byte-order mark later in the file is not skipped: that line is NOT_JSON, as a record starting with one is on Kafka', async () => {
    const [first, second] = seedIncidentExample();
    const bytes = Buffer.concat([
      lines([first!]),
      Buffer.from([0xef, 0xbb, 0xbf]),
      lines([second!]),
    ]);
    const dead = (await auditBytes(bytes)).filter((r) => r.record === 'dead-letter');
    expect(dead.map((d) => [d.lineNumber, String(d.error).split(':')[0]])).toEqual([
      [2, 'NOT_JSON'],
    ]);
    const onKafka = decodeRecordNow(
      {
        key: Buffer.from('seed-incident'),
        value: Buffer.concat([
          Buffer.from([0xef, 0xbb, 0xbf]),
          Buffer.from(JSON.stringify(second)),
        ]),
        offset: '0',
      },
      'auto',
    );
    expect(onKafka).toMatchObject({ ok: false, code: 'NOT_JSON' });
  });

  it('a line that is not valid UTF-8 is a NOT_UTF8 dead letter, with the code the processor gives the same bytes', async () => {
    const [before, after] = JSON.stringify(seedIncidentExample()[1]).split('SYSTEM') as [
      string,
      string,
    ];
    // A lone 0xc3 (the first byte of a two-byte character) inside a string: invalid UTF-8.
    const invalid = Buffer.concat([
      Buffer.from(before + 'SYS'),
      Buffer.from([0xc3]),
      Buffer.from('TEM' + after),
    ]);
    const rows = await auditBytes(Buffer.concat([invalid, Buffer.from('\n')]));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ record: 'dead-letter', lineNumber: 1 });
    expect(String(rows[0]!.error)).toMatch(
      /^NOT_UTF8: not valid UTF-8: byte 0xc3 at byte offset \d+/,
    );
    const onKafka = decodeRecordNow(
      { key: Buffer.from('seed-incident'), value: invalid, offset: '0' },
      'auto',
    );
    expect(onKafka).toMatchObject({ ok: false, code: 'NOT_UTF8' });
  });

  it('a repeated key fails closed: the pin it would have dropped is not silently lost, the session is refused', async () => {
    const b = new SessionBuilder('dup').open(policyIn('TURNS', 2));
    b.turn(10, 'USER', ['CONSTRAINT']).turns(9, 10);
    b.truncate('TURNS', 0, 3);
    b.request('r', 'TURNS', 0, 10, 8);
    const events = b.events.map((e) => JSON.stringify(e));
    // The constraint's turn, with `pins` given twice: JSON.parse would keep the empty one.
    events[1] = events[1]!.replace('"pins":["CONSTRAINT"]', '"pins":["CONSTRAINT"],"pins":[]');
    const rows = await auditBytes(Buffer.from(events.join('\n') + '\n'));
    const dead = rows.filter((r) => r.record === 'dead-letter');
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ lineNumber: 2 });
    expect(String(dead[0]!.error)).toMatch(
      /^DUPLICATE_KEY: key "pins" appears twice in one object \(again at character offset \d+\)/,
    );
    const verdict = rows.find((r) => r.record === 'verdict')!;
    expect(verdict.decision).toBe('REFUSE');
    expect((verdict.reasons as { code: string }[]).map((r) => r.code)).toContain('EVENT_GAP');
  });

  it('names a number too large for a double as such, not as null', async () => {
    const line =
      '{"type":"SessionClosed","sessionId":"s","seq":1e400,"eventId":"e","occurredAt":1}\n';
    const [dead] = await auditBytes(Buffer.from(line));
    expect(String(dead!.error)).toBe(
      'NUMBER_TOO_LARGE: field "seq": expected an integer at most 4503599627370495 (2^52 − 1), got a number too large to represent (1e400 or the like)',
    );
  });
});

describe('audit: several files, directories, closed pipes', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-audit-'));

  it('replays several files in the order given as one stream (as cat would), naming the file of a dead letter', async () => {
    const events = seedIncidentExample();
    const half = Math.floor(events.length / 2);
    const a = lines(events.slice(0, half));
    const b = Buffer.concat([lines(events.slice(half)), Buffer.from('not json\n')]);
    const both = await auditBytes(a, b);
    const whole = await auditBytes(Buffer.concat([a, b]));
    expect(both.filter((r) => r.record !== 'dead-letter')).toEqual(
      whole.filter((r) => r.record !== 'dead-letter'),
    );
    expect(both.filter((r) => r.record === 'dead-letter')).toEqual([
      expect.objectContaining({ file: 'f1', lineNumber: events.length - half + 1 }),
    ]);
  });

  it('refuses a directory before reading anything (InputError; the CLI exits 2 with one line)', async () => {
    await expect(openInputs([SEED, dir], process.stdin)).rejects.toThrow(
      new InputError(`cannot read ${dir}: it is a directory, not a JSON-lines file`),
    );
    const run = spawnSync('node', [CLI, 'audit', dir], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `compaction-guard audit: cannot read ${dir}: it is a directory, not a JSON-lines file\n`,
    );
  });

  it('a missing file exits 2 with one line and no output', () => {
    const run = spawnSync('node', [CLI, 'audit', SEED, path.join(dir, 'nope.jsonl')], {
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^compaction-guard audit: cannot open .*nope\.jsonl: no such file\n$/,
    );
  });

  it('stops quietly, exit 0, when the reader closes the pipe (audit ... | head)', async () => {
    const big = path.join(dir, 'big.jsonl');
    const one = lines(seedIncidentExample());
    writeFileSync(big, Buffer.concat(Array.from({ length: 3000 }, () => one)));
    const child = spawn('node', [CLI, 'audit', '--json', big], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // Read one chunk, then close our end, as `head -1` does.
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });
});

describe('audit: the readable report never hands input to the terminal', () => {
  it('writes control characters of session ids as visible escapes', async () => {
    const events = seedIncidentExample().map((e) => ({
      ...e,
      sessionId: 'evil\u001b]0;owned\u0007\u009b2J',
    }));
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await runAudit([{ name: 'x', stream: Readable.from([lines(events)]) }], out, { json: false });
    const report = Buffer.concat(chunks).toString('utf8');
    expect(report).toContain('evil\\x1b]0;owned\\x07\\x9b2J');
    const controls = [...report].filter((c) => {
      const code = c.charCodeAt(0);
      return (code < 0x20 && c !== '\n') || (code >= 0x7f && code <= 0x9f);
    });
    expect(controls).toEqual([]);
  });
});
