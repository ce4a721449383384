/**
 * `audit` on long lines (docs/decisions.md 156): the input is split in one pass, a line longer
 * than the input topic's max.message.bytes is a TOO_LONG dead letter that is never held whole,
 * and a dead letter shows at most MAX_SHOWN_LINE_BYTES of its line, with the whole line's length
 * and sha256 when it is cut.
 */
import { createHash } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import fc from 'fast-check';
import { LineSplitter, linesOf, runAudit, type InputLine } from '../../src/cli/audit';
import { MAX_SHOWN_LINE_BYTES } from '../../src/audit/replay';
import { toolSettings } from '../../src/config/config';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../src/kafka/recordLimits';
import { seedIncidentExample } from '../support/examples';

type Row = Record<string, unknown>;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** `bytes` in pieces of `size` (the last one shorter), as a file stream hands them over. */
function chunked(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

async function audit(chunks: Buffer[], maxLineBytes?: number): Promise<Row[]> {
  const out = new PassThrough();
  const written: Buffer[] = [];
  out.on('data', (c: Buffer) => written.push(c));
  await runAudit([{ name: 'f', stream: Readable.from(chunks) }], out, {
    json: true,
    ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
  });
  const text = Buffer.concat(written).toString('utf8').trim();
  return text === '' ? [] : text.split('\n').map((l) => JSON.parse(l) as Row);
}

/** What the splitter is to give, computed the plain way: split on \n, drop one \r, classify. */
function reference(bytes: Buffer, limit: number): unknown[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, start)) {
    parts.push(bytes.subarray(start, i));
    start = i + 1;
  }
  if (start < bytes.length) parts.push(bytes.subarray(start));
  return parts.map((p) => {
    const line = p.length > 0 && p[p.length - 1] === 13 ? p.subarray(0, -1) : p;
    if (line.length <= limit) return { bytes: [...line] };
    const head = [...line.subarray(0, MAX_SHOWN_LINE_BYTES)];
    return { length: line.length, sha256: sha256(line), head };
  });
}

function plain(line: InputLine): unknown {
  if (Buffer.isBuffer(line)) return { bytes: [...line] };
  return { length: line.length, sha256: line.sha256, head: [...line.head] };
}

describe('audit: the line splitter', () => {
  it('gives the lines a plain split gives, whatever the chunking and wherever \\r and \\n fall', async () => {
    const byte = fc.constantFrom(0x61, 0x0a, 0x0d, 0x7b, 0xc3, 0xa9);
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(
          fc.array(byte, { maxLength: 300 }),
          fc.integer({ min: 1, max: 64 }),
          fc.integer({ min: 0, max: 40 }),
        ),
        async ([bytes, chunk, limit]) => {
          const input = Buffer.from(bytes);
          const got: unknown[] = [];
          for await (const line of linesOf(Readable.from(chunked(input, chunk)), limit))
            got.push(plain(line));
          expect(got).toEqual(reference(input, limit));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('holds no more than the limit and one byte of a line: a 20 MB line is counted and hashed, not kept', () => {
    const splitter = new LineSplitter(1000);
    const line = Buffer.alloc(20 * 1024 * 1024, 0x61);
    const got: InputLine[] = [];
    for (const piece of chunked(Buffer.concat([line, Buffer.from('\r\n')]), 65536))
      got.push(...splitter.push(piece));
    expect(got).toHaveLength(1);
    expect(Buffer.isBuffer(got[0])).toBe(false);
    expect(got[0]).toEqual({
      length: line.length,
      sha256: sha256(line),
      head: line.subarray(0, MAX_SHOWN_LINE_BYTES),
    });
    // What it keeps between pieces is the head, a copy: none of the 64 KiB pieces.
    expect((got[0] as { head: Buffer }).head.buffer.byteLength).toBeLessThan(65536);
  });
});

describe('audit: a line longer than the input topic takes', () => {
  const events = seedIncidentExample().map((e) => JSON.stringify(e));

  it("is a TOO_LONG dead letter naming the limit, shown cut with the whole line's length and sha256; the next line is decided", async () => {
    const long = JSON.stringify({ type: 'SessionClosed', sessionId: 'x'.repeat(3_000_000) });
    const input = Buffer.from([events[0], long, ...events.slice(1)].join('\n') + '\n');
    const rows = await audit(chunked(input, 65536));
    const dead = rows.filter((r) => r.record === 'dead-letter');
    expect(dead).toEqual([
      {
        record: 'dead-letter',
        lineNumber: 2,
        error: expect.stringMatching(
          new RegExp(
            `^TOO_LONG: the line is ${long.length} bytes, more than the input topic's max.message.bytes \\(${DEFAULT_MAX_MESSAGE_BYTES};`,
          ),
        ),
        line: long.slice(0, MAX_SHOWN_LINE_BYTES),
        lineBytes: long.length,
        lineSha256: sha256(Buffer.from(long)),
      },
    ]);
    // The lines after it are the seed incident, decided as without the long line.
    const without = await audit([Buffer.from(events.join('\n') + '\n')]);
    expect(rows.filter((r) => r.record !== 'dead-letter')).toEqual(without);
  });

  it('is decided at the limit: a line of exactly the limit (a \\r not counted) is decoded, one byte more is TOO_LONG', async () => {
    const line = events[0]!;
    const limit = Buffer.byteLength(line);
    const at = await audit([Buffer.from(line + '\r\n')], limit);
    expect(at.map((r) => r.record)).not.toContain('dead-letter');
    const over = await audit([Buffer.from(line + ' \r\n')], limit);
    expect(over.map((r) => [r.record, String(r.error).split(':')[0]])).toEqual([
      ['dead-letter', 'TOO_LONG'],
    ]);
    expect(over[0]).toMatchObject({
      lineBytes: limit + 1,
      lineSha256: sha256(Buffer.from(line + ' ')),
    });
  });

  it('is a dead letter before any other check: an over-long line of invalid UTF-8 is TOO_LONG, not NOT_UTF8', async () => {
    const rows = await audit([Buffer.alloc(2000, 0xff)], 1000);
    expect(rows.map((r) => String(r.error).split(':')[0])).toEqual(['TOO_LONG']);
  });
});

describe('audit: what a dead letter shows of its line', () => {
  it('shows a short bad line whole, with no length or sha256', async () => {
    const rows = await audit([Buffer.from('not json\n')]);
    expect(rows).toEqual([expect.objectContaining({ record: 'dead-letter', line: 'not json' })]);
    expect(Object.keys(rows[0]!)).not.toContain('lineBytes');
    expect(Object.keys(rows[0]!)).not.toContain('lineSha256');
  });

  it('cuts a bad line longer than the bound at a character boundary, keeping its length and sha256', async () => {
    // 'é' is two bytes: an odd bound would split one; within the limit, so it is decoded (NOT_JSON).
    const line = '{' + 'é'.repeat(5000);
    const rows = await audit([Buffer.from(line + '\n')]);
    expect(rows).toHaveLength(1);
    const shown = String(rows[0]!.line);
    expect(String(rows[0]!.error)).toMatch(/^NOT_JSON/);
    expect(line.startsWith(shown)).toBe(true);
    expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(MAX_SHOWN_LINE_BYTES);
    expect(Buffer.byteLength(shown)).toBeGreaterThan(MAX_SHOWN_LINE_BYTES - 2);
    expect(rows[0]).toMatchObject({
      lineBytes: Buffer.byteLength(line),
      lineSha256: sha256(Buffer.from(line)),
    });
  });

  it('keeps a dead letter of a 1 MB line of control bytes small (it once echoed it six times over)', async () => {
    const rows = await audit([Buffer.alloc(1_000_000, 0x01), Buffer.from('\n')]);
    expect(JSON.stringify(rows[0]).length).toBeLessThan(6 * MAX_SHOWN_LINE_BYTES + 500);
    expect(rows[0]).toMatchObject({ lineBytes: 1_000_000 });
  });
});

describe('audit: the line limit setting', () => {
  it("is Kafka's default max.message.bytes unless CG_INPUT_MAX_MESSAGE_BYTES or --max-message-bytes says otherwise (the flag wins)", () => {
    expect(toolSettings({}).inputMaxMessageBytes).toBe(DEFAULT_MAX_MESSAGE_BYTES);
    expect(toolSettings({ CG_INPUT_MAX_MESSAGE_BYTES: '4096' }).inputMaxMessageBytes).toBe(4096);
    expect(
      toolSettings({ CG_INPUT_MAX_MESSAGE_BYTES: '4096' }, { maxMessageBytes: '2048' })
        .inputMaxMessageBytes,
    ).toBe(2048);
    expect(() => toolSettings({ CG_INPUT_MAX_MESSAGE_BYTES: '0' })).toThrow(
      /CG_INPUT_MAX_MESSAGE_BYTES \(--max-message-bytes\): expected an integer ≥ 1/,
    );
  });
});
