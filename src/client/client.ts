/**
 * GuardClient: the orchestrator's connection to compaction-guard. One idempotent producer for
 * the events of all its sessions (key = sessionId, contract §3) and one shared read_committed
 * consumer of the verdicts (contract §8). Lifecycle: `connect()`, then sessions, then `close()`.
 */
import { type Kafka, Partitioners, type Producer } from 'kafkajs';
import pino, { type Logger } from 'pino';
import type { Config } from '../config/config';
import { randomUUID } from 'node:crypto';
import type {
  ContextEvent,
  LossAcknowledged,
  Signature,
  SpillCompleted,
  SpillFailed,
} from '../engine/events';
import { decodeEventJson } from '../schema/decodeEvent';
import type { Verdict } from '../engine/outputs';
import { checkKafkaSecurity, kafkaClient } from '../kafka/client';
import { clientInputPartitions } from '../kafka/topics';
import { RegistryCodec } from '../registry/codec';
import { connectionOf } from './connection';
import { isSignable, type SignableEvent } from '../engine/authority';
import { type SigningKey, expiryFrom, signed } from '../authority/signing';
import { configuredSigningKey } from '../authority/signingKeySource';
import { GuardClosedError, GuardUsageError } from './errors';
import { OrderedSender } from './sender';
import { GuardedSession, type SessionOptions, type SessionSnapshot } from './session';
import { VerdictListener } from './verdicts';

export type EventFormat = 'avro' | 'json';

type Body<E> = Omit<E, 'seq' | 'eventId' | 'occurredAt' | 'signature'> & {
  signature?: Signature | null;
};
/** What an out-of-band sender gives: the event without seq, eventId and occurredAt. */
export type OutOfBandEvent = Body<SpillCompleted> | Body<SpillFailed> | Body<LossAcknowledged>;

export interface OutOfBandOptions {
  /** Sign with this key instead of the client's (a spill service's own); null: unsigned. */
  signingKey?: SigningKey | null;
  /** The session's lastEventAt, when known (e.g. a spill request's requestedAt). */
  lastEventAt?: number | null;
}
const OUT_OF_BAND: readonly string[] = ['SpillCompleted', 'SpillFailed', 'LossAcknowledged'];

export interface GuardClientOptions {
  /** Environment read as `compaction-guard run` reads it (KAFKA_BROKERS, CG_*); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Settings on top of the environment: brokers, registryUrl, topic names, SASL/TLS... */
  config?: Partial<Config>;
  /** How events are written: Avro through the registry (default) or JSON. */
  format?: EventFormat;
  /** Default wait for a verdict (ms); no verdict in time is a GuardTimeoutError. Default 30 s. */
  verdictTimeoutMs?: number;
  /** Default pino logger at warn. */
  logger?: Logger;
  /**
   * Signs every SpillCompleted, SpillFailed and LossAcknowledged this client sends, in band and
   * out of band (contract §4b: a processor with a trusted key ring applies no other). Default:
   * the key in CG_SIGNING_KEY_FILE, else, against a running `npm start`, its development key,
   * else none (the three go unsigned). `null`: never sign.
   */
  signingKey?: SigningKey | null;
}

export const DEFAULT_VERDICT_TIMEOUT_MS = 30_000;

export class GuardClient {
  readonly format: EventFormat;
  readonly verdictTimeoutMs: number;
  private readonly options: GuardClientOptions;
  private readonly log: Logger;
  private state: 'new' | 'connecting' | 'open' | 'closed' = 'new';
  private resolved: Config | null = null;
  private kafka: Kafka | null = null;
  private producer: Producer | null = null;
  private codec: RegistryCodec | null = null;
  private sender: OrderedSender | null = null;
  private listener: VerdictListener | null = null;
  private key: SigningKey | null = null;

  constructor(options: GuardClientOptions = {}) {
    this.options = options;
    this.format = options.format ?? 'avro';
    this.verdictTimeoutMs = options.verdictTimeoutMs ?? DEFAULT_VERDICT_TIMEOUT_MS;
    this.log = options.logger ?? pino({ level: 'warn' });
  }

  /** The settings in use (after connect). */
  get config(): Config {
    if (this.resolved === null) throw new GuardClosedError('GuardClient: call connect() first');
    return this.resolved;
  }

  /** Connects the producer, registers the schemas, and starts the verdict consumer. */
  async connect(): Promise<void> {
    if (this.state !== 'new')
      throw new GuardClosedError(`GuardClient.connect: the client is ${this.state}`);
    this.state = 'connecting';
    const env = this.options.env ?? process.env;
    const { config, embedded } = connectionOf(env, this.options.config);
    this.resolved = config;
    try {
      this.key =
        this.options.signingKey !== undefined
          ? this.options.signingKey
          : (configuredSigningKey(env, {}, embedded)?.key ?? null);
    } catch (e) {
      this.state = 'closed';
      throw e;
    }
    const kafka = kafkaClient(config.brokers, `${config.clientId}-client`, this.log, config);
    this.kafka = kafka;
    // As `run`: no broker, wrong credentials or an untrusted certificate fail within seconds,
    // with one message naming the setting (a StartupError, as `run` reports it).
    try {
      await checkKafkaSecurity(config.brokers, `${config.clientId}-client`, this.log, config);
    } catch (e) {
      this.state = 'closed';
      throw e;
    }
    // A few quick retries, not kafkajs' ~1 minute: nobody there is a clear error now.
    const admin = kafkaClient(
      config.brokers,
      `${config.clientId}-client`,
      this.log,
      config,
      2,
    ).admin();
    try {
      await admin.connect();
    } catch (e) {
      this.state = 'closed';
      throw new Error(
        `cannot reach Kafka at ${config.brokers.join(',')} (KAFKA_BROKERS): ${(e as Error).message}`,
        { cause: e },
      );
    }
    let inputPartitions: number;
    try {
      // The processor creates the same topics the same way when it starts (whichever comes first).
      // The input's partition count pins every event to its partition (src/kafka/checkedSend.ts).
      inputPartitions = await clientInputPartitions(admin, config);
    } finally {
      await admin.disconnect();
    }
    this.codec = RegistryCodec.fromConfig(config);
    try {
      await this.codec.registerAll();
    } catch (e) {
      this.state = 'closed';
      this.codec.close();
      throw new Error(
        `schema registry at ${config.registryUrl} (SCHEMA_REGISTRY_URL): ${(e as Error).message}`,
        { cause: e },
      );
    }
    // kafkajs' own setting for idempotence: retry until the broker takes the batch (a bounded
    // count could drop it and break the session's sequence); verdict waits have their timeout.
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      // Java's murmur2 on the key, as other Kafka clients: one session, one partition, whoever sends.
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 200, maxRetryTime: 5_000 },
    });
    await this.producer.connect();
    this.sender = new OrderedSender(this.producer, config.inputTopic, inputPartitions, this.log);
    this.listener = new VerdictListener(
      kafka,
      this.codec,
      config.verdictTopic,
      `${config.clientId}-verdicts`,
      this.log,
    );
    await this.listener.start();
    this.state = 'open';
  }

  /** A new session; call `open(policy)` on it first. */
  session(sessionId: string, options: SessionOptions = {}): GuardedSession {
    this.requireOpen('session');
    return new GuardedSession(this, sessionId, null, options);
  }

  /**
   * A session restored from a snapshot (after an orchestrator restart): the events the snapshot
   * lists as unacknowledged are sent again under their seq and eventId (contract §4 step 1: a
   * redelivery is ignored, a lost one is applied), then the session continues at its next seq.
   */
  async resume(snapshot: SessionSnapshot, options: SessionOptions = {}): Promise<GuardedSession> {
    this.requireOpen('resume');
    const session = new GuardedSession(this, snapshot.sessionId, snapshot, options);
    await session.resendPending();
    return session;
  }

  /** Waits for what was sent, stops the consumer and the producer. Idempotent. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    await this.sender?.flushed();
    await this.listener?.stop();
    await this.producer?.disconnect();
    this.codec?.close();
  }

  /** @internal Sends one event (key = sessionId); resolves when the broker acknowledged it. */
  send(event: ContextEvent): Promise<void> {
    this.requireOpen('send');
    const value =
      this.format === 'avro'
        ? this.codec!.encodeEvent(event)
        : Buffer.from(JSON.stringify(event), 'utf8');
    return this.sender!.send({ key: event.sessionId, value });
  }

  /** The key this client signs with (null: none). */
  get signingKey(): SigningKey | null {
    return this.key;
  }

  /**
   * An out-of-band SpillCompleted, SpillFailed or LossAcknowledged (contract §3, §4 step 0):
   * seq null, so it takes no place in the session's sequence; for operators' tools and spill
   * services. `eventId`: give the same one when repeating an answer (a redelivery is ignored).
   * Signed (contract §4b) by `options.signingKey` (default: the client's), unless the event
   * carries a signature already; `options.lastEventAt` (the session's, when known) is where the
   * validity starts if it is later than this clock.
   */
  async outOfBand(
    event: OutOfBandEvent,
    eventId: string = randomUUID(),
    options: OutOfBandOptions = {},
  ): Promise<void> {
    this.requireOpen('outOfBand');
    if (!OUT_OF_BAND.includes(event.type))
      throw new GuardUsageError(
        'type',
        `expected one of ${OUT_OF_BAND.join(', ')}, got ${JSON.stringify(event.type)}`,
      );
    const now = Date.now();
    const unsigned = {
      ...event,
      seq: null,
      eventId,
      occurredAt: now,
      signature: event.signature ?? null,
    } as SignableEvent;
    const key = options.signingKey !== undefined ? options.signingKey : this.key;
    const full =
      unsigned.signature === null && key !== null
        ? signed(unsigned, key, expiryFrom(now, options.lastEventAt ?? null))
        : unsigned;
    const checked = decodeEventJson(full);
    if (!checked.ok)
      throw new GuardUsageError(checked.error.field ?? event.type, checked.error.message);
    await this.send(full);
  }

  /**
   * @internal An in-band event of a session, signed by the client's key when it is one of the
   * three (contract §4b); `lastEventAt`: the latest occurredAt the session has sent.
   */
  signedInBand(event: ContextEvent, lastEventAt: number | null): ContextEvent {
    if (this.key === null || !isSignable(event)) return event;
    return signed(event, this.key, expiryFrom(event.occurredAt, lastEventAt));
  }

  /** @internal */
  get kafkaClient(): Kafka {
    this.requireOpen('kafkaClient');
    return this.kafka!;
  }

  /** @internal */
  get registryCodec(): RegistryCodec {
    this.requireOpen('registryCodec');
    return this.codec!;
  }

  /** @internal Registers interest in a verdict before its request is sent. */
  expectVerdict(sessionId: string, requestId: string, seqs: readonly number[]): Promise<Verdict> {
    this.requireOpen('expectVerdict');
    return this.listener!.expect(sessionId, requestId, seqs);
  }

  /** @internal */
  forgetVerdict(sessionId: string, requestId: string): void {
    this.listener?.forget(sessionId, requestId);
  }

  /** Requests waiting for a verdict now (for metrics and tests). */
  get waiting(): number {
    return this.listener?.waiting ?? 0;
  }

  private requireOpen(what: string): void {
    if (this.state !== 'open')
      throw new GuardClosedError(
        `GuardClient.${what}: the client is ${this.state === 'closed' ? 'closed' : 'not connected (call connect() first)'}`,
      );
  }
}
