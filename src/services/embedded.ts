/**
 * Where a running `npm start` (embedded Kafka + registry) can be found: a small JSON state file
 * written once the processor is ready and removed when it stops. On-call commands (`tail`,
 * `inspect`, `acknowledge`, `simulate`) read it when no KAFKA_BROKERS are given, so they work
 * against the embedded services with no flags at all.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { serviceSettings } from '../config/config';

export interface EmbeddedState {
  brokers: string[];
  registryUrl: string;
  httpUrl: string;
  pid: number;
  startedAt: string;
  /** The development key `npm start` made (contract §4b): what the tools and the client sign with by default. */
  signingKeyFile?: string;
  /** The ring the processor trusts (the development key's alone, unless CG_TRUSTED_KEYS_FILE was set). */
  trustedKeysFile?: string;
}

/** `<cwd>/.cache/embedded.json` (next to the fetched Kafka and registry), or CG_EMBEDDED_FILE. */
export function embeddedStatePath(env: NodeJS.ProcessEnv = process.env): string {
  return serviceSettings(env).embeddedFile ?? path.resolve('.cache', 'embedded.json');
}

/** Atomic: a reader sees the old file or the new one, never half of one. */
export function writeEmbeddedState(s: EmbeddedState, env: NodeJS.ProcessEnv = process.env): void {
  const file = embeddedStatePath(env);
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(s, null, 2) + '\n');
  renameSync(tmp, file);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isState(v: unknown): v is EmbeddedState {
  const o = v as Partial<EmbeddedState> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    Array.isArray(o.brokers) &&
    o.brokers.every((b) => typeof b === 'string') &&
    typeof o.registryUrl === 'string' &&
    typeof o.httpUrl === 'string' &&
    Number.isSafeInteger(o.pid) &&
    typeof o.startedAt === 'string' &&
    (o.signingKeyFile === undefined || typeof o.signingKeyFile === 'string') &&
    (o.trustedKeysFile === undefined || typeof o.trustedKeysFile === 'string')
  );
}

/**
 * The state of a running embedded processor, or null when there is no file, it is not a state
 * file, or its process is gone (a `kill -9` leaves the file behind: it must not be trusted).
 */
export function readEmbeddedState(env: NodeJS.ProcessEnv = process.env): EmbeddedState | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(embeddedStatePath(env), 'utf8'));
  } catch {
    return null;
  }
  if (!isState(parsed) || !pidAlive(parsed.pid)) return null;
  return parsed;
}

/** Removes the file only when it is this pid's: a second `npm start` may have replaced it. */
export function removeEmbeddedState(pid: number, env: NodeJS.ProcessEnv = process.env): void {
  const file = embeddedStatePath(env);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return;
  }
  if ((parsed as { pid?: unknown } | null)?.pid === pid) rmSync(file, { force: true });
}

/** The message for a command that needs brokers and found neither setting nor embedded state. */
export function noEmbeddedMessage(command: string, env: NodeJS.ProcessEnv = process.env): string {
  return (
    `compaction-guard ${command}: no KAFKA_BROKERS and no running \`npm start\` found ` +
    `(${path.relative(process.cwd(), embeddedStatePath(env)) || embeddedStatePath(env)}): ` +
    'set KAFKA_BROKERS and SCHEMA_REGISTRY_URL (or --brokers / --registry-url), or start the ' +
    'embedded services with `npm start` in this directory'
  );
}
