/**
 * Where a running `npm start` (embedded Kafka + registry) can be found: a small JSON state file
 * written once the processor is ready and removed when it stops. On-call commands (`tail`,
 * `inspect`, `acknowledge`, `simulate`) read it when no KAFKA_BROKERS are given, so they work
 * against the embedded services with no flags at all.
 */
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { ConfigError, isLoopbackHost, serviceSettings } from '../config/config';
import { hasUrlCredentials } from '../config/settings';

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

/**
 * Atomic: a reader sees the old file or the new one, never half of one. Mode 0600: only this
 * user reads where the services are, and only this user may change it (readEmbeddedState).
 */
export function writeEmbeddedState(s: EmbeddedState, env: NodeJS.ProcessEnv = process.env): void {
  const file = embeddedStatePath(env);
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  writeFileSync(tmp, JSON.stringify(s, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
  renameSync(tmp, file);
}

/**
 * Why a state file with these attributes must not be trusted, or null. The on-call commands
 * send credentials (SASL, registry, the sessions token) to what it names, so it must be this
 * user's own (`uid`) and writable by no one else. Pure, for the unit test.
 */
export function untrustedReason(
  st: Pick<Stats, 'uid' | 'mode' | 'isFile'>,
  uid: number | undefined,
): string | null {
  if (!st.isFile()) return 'it is not a regular file';
  if (uid !== undefined && st.uid !== uid)
    return `it is owned by uid ${st.uid}, not by you (uid ${uid})`;
  if ((st.mode & 0o022) !== 0)
    return `it is group- or world-writable (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`;
  return null;
}

/**
 * Why the endpoints a state file names must not be used, or null: only a local `npm start`
 * writes it, so anything beyond this machine (where a token or password would go) is refused.
 */
export function untrustedEndpoint(s: EmbeddedState): string | null {
  for (const b of s.brokers) {
    const host = b.slice(0, b.lastIndexOf(':'));
    if (!isLoopbackHost(host)) return `broker ${JSON.stringify(b)} is not a loopback address`;
  }
  for (const [name, url] of [
    ['registryUrl', s.registryUrl],
    ['httpUrl', s.httpUrl],
  ] as const) {
    if (hasUrlCredentials(url)) return `${name} carries credentials`;
    let host: string;
    try {
      host = new URL(url).hostname;
    } catch {
      return `${name} is not a URL`;
    }
    if (!isLoopbackHost(host)) return `${name} ${JSON.stringify(url)} is not on a loopback address`;
  }
  return null;
}

/** The file's text if it exists, after the ownership and mode checks; a symbolic link is refused. */
function readTrusted(file: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw refusal(file, 'it is a symbolic link');
    throw e;
  }
  try {
    const reason = untrustedReason(fstatSync(fd), process.getuid?.());
    if (reason !== null) throw refusal(file, reason);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

function refusal(file: string, reason: string): ConfigError {
  return new ConfigError(
    `${file} is not trusted: ${reason}. It tells the on-call commands where to send credentials; ` +
      'remove it (a running `npm start` writes it again, mode 0600) or set KAFKA_BROKERS and SCHEMA_REGISTRY_URL',
  );
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
 * A file that is not this user's own, is writable by others, or names an endpoint beyond this
 * machine is refused (ConfigError): it could send the commands' credentials anywhere.
 */
export function readEmbeddedState(env: NodeJS.ProcessEnv = process.env): EmbeddedState | null {
  const file = embeddedStatePath(env);
  const text = readTrusted(file);
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isState(parsed) || !pidAlive(parsed.pid)) return null;
  const endpoint = untrustedEndpoint(parsed);
  if (endpoint !== null) throw refusal(file, endpoint);
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
    'set KAFKA_BROKERS and SCHEMA_REGISTRY_URL (or --brokers / --registry-url), or run ' +
    '`npm start` in a compaction-guard checkout and, from any other directory (a Claude Code ' +
    "project, say), set CG_EMBEDDED_FILE to that checkout's .cache/embedded.json"
  );
}
