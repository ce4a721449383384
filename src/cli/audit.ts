/** `compaction-guard audit FILE|- [--json]`: stream a JSON-lines file through the engine. */
import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { Replay } from '../audit/replay';
import { ReportBuilder } from '../audit/report';

export interface AuditOptions {
  json: boolean;
}

/** Opens the input; rejects when it cannot be opened (the only non-zero exit, DESIGN §7). */
export async function openInput(file: string, stdin: Readable): Promise<Readable> {
  if (file === '-') return stdin;
  const stream = createReadStream(file);
  await new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', reject);
  });
  return stream;
}

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

/** Streams: memory grows with sessions, never with the file's size. */
export async function runAudit(
  input: Readable,
  out: Writable,
  options: AuditOptions,
): Promise<void> {
  const replay = new Replay();
  const report = new ReportBuilder();
  const lines = createInterface({ input, crlfDelay: Infinity });
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber++;
    for (const record of replay.line(line, lineNumber)) {
      if (options.json) await write(out, JSON.stringify(record) + '\n');
      else report.add(record);
    }
  }
  if (!options.json) await write(out, report.render());
}
