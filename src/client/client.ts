/**
 * GuardClient: the orchestrator's connection to compaction-guard. One idempotent producer for
 * the events of all its sessions (key = sessionId, contract §3) and one shared read_committed
 * consumer of the verdicts (contract §8). Lifecycle (lifecycle.ts): `connect()`, then sessions,
 * then `close()`; a failed `connect()` closes what it opened and throws a coded error.
 */
import pino, { type Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import type { Config } from '../config/config';
import type { ContextEvent } from '../engine/events';
import { checkKafkaSecurity, kafkaClient } from '../kafka/client';
import type { KafkaConnection } from '../kafka/transport/connection';
import { clientInputPartitions } from '../kafka/topics';
import { RegistryCodec } from '../registry/codec';
import { REGISTRATION_ATTEMPTS, registerSchemas } from '../registry/register';
import { OperationalError, StartupError } from '../errors';
import { connectionOf } from './connection';
import { SIGNABLE_EVENT_TYPES, isSignable, type SignableEvent } from '../engine/authority';
import { type SigningKey, expiryFrom, signed } from '../authority/signing';
import { configuredSigningKey } from '../authority/signingKeySource';
import { GuardUsageError } from './errors';
import { type OutOfBandEvent, outOfBand } from './events';
import { ClientLifecycle, type ClientState } from './lifecycle';
import { OpenResources } from './resources';
import { BatchedProducer } from './batchedProducer';
import { GuardedSession, type SessionOptions, type SessionSnapshot } from './session';
import type { SessionPort } from './session/port';
import { requireDecodable } from './validate';
import { VerdictListener } from './verdicts';

export type EventFormat = 'avro' | 'json';
export type { OutOfBandEvent };

export interface OutOfBandOptions {
  /** Sign with this key instead of the client's (a spill service's own); null: unsigned. */
  signingKey?: SigningKey | null;
  /** The session's lastEventAt, when known (e.g. a spill request's requestedAt). */
  lastEventAt?: number | null;
}

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
  /**
   * false: a client that only sends out of band (an operator's tool, a spill service) starts no
   * verdict consumer, and makes no sessions. Default true.
   */
  verdicts?: boolean;
}

export const DEFAULT_VERDICT_TIMEOUT_MS = 30_000;

/** What an open client holds. */
interface Connected {
  config: Config;
  kafka: KafkaConnection;
  codec: RegistryCodec;
  key: SigningKey | null;
  sender: BatchedProducer;
  listener: VerdictListener | null;
  resources: OpenResources;
}

export class GuardClient {
  readonly format: EventFormat;
  readonly verdictTimeoutMs: number;
  private readonly options: GuardClientOptions;
  private readonly log: Logger;
  private readonly lifecycle = new ClientLifecycle();
  /** Set while `connect()` runs, settled either way: a `close()` meanwhile waits for it. */
  private connecting: Promise<void> | null = null;
  /** Set once open; kept after close (its settings stay readable). */
  private connected: Connected | null = null;

  constructor(options: GuardClientOptions = {}) {
    this.options = options;
    this.format = options.format ?? 'avro';
    this.verdictTimeoutMs = options.verdictTimeoutMs ?? DEFAULT_VERDICT_TIMEOUT_MS;
    this.log = options.logger ?? pino({ level: 'warn' });
  }

  /** Where the client is in its life: new, connecting, open, closing or closed. */
  get state(): ClientState {
    return this.lifecycle.state;
  }

  /** The settings in use (once connected). */
  get config(): Config {
    return (this.connected ?? this.requireConnected('config')).config;
  }

  /**
   * Connects the producer, registers the schemas, and starts the verdict consumer. A step that
   * fails closes what the steps before it opened (the client ends closed) and throws: a
   * ConfigError for the settings, a StartupError with its code (KAFKA_UNREACHABLE,
   * KAFKA_AUTHENTICATION_FAILED, KAFKA_TLS_FAILED, REGISTRY_UNREACHABLE, REGISTRY_AUTH_FAILED)
   * for a service that cannot be reached or refuses.
   */
  async connect(): Promise<void> {
    this.lifecycle.requireNew();
    this.lifecycle.to('connecting');
    const connecting = this.connectOrClose();
    // Settles once the client is open or closed again, not before: a close() waits for that.
    this.connecting = settled(connecting);
    try {
      await connecting;
    } finally {
      this.connecting = null;
    }
  }

  /** A new session; call `open(policy)` on it first. */
  session(sessionId: string, options: SessionOptions = {}): GuardedSession {
    return new GuardedSession(this.sessionPort('session'), sessionId, null, options);
  }

  /**
   * A session restored from a snapshot (after an orchestrator restart): the events the snapshot
   * lists as unacknowledged are sent again under their seq and eventId (contract §4 step 1: a
   * redelivery is ignored, a lost one is applied), then the session continues at its next seq.
   */
  async resume(snapshot: SessionSnapshot, options: SessionOptions = {}): Promise<GuardedSession> {
    const port = this.sessionPort('resume');
    const session = new GuardedSession(port, snapshot.sessionId, snapshot, options);
    await session.resendPending();
    return session;
  }

  /**
   * Waits for what was sent, stops the consumer and the producer. Idempotent; during a
   * `connect()`, waits for it first.
   */
  async close(): Promise<void> {
    if (this.connecting !== null) await this.connecting;
    switch (this.lifecycle.state) {
      case 'new':
        this.lifecycle.to('closed');
        return;
      case 'open': {
        this.lifecycle.to('closing');
        const failures = await this.connected!.resources.closeAll(this.log);
        this.lifecycle.to('closed');
        if (failures.length > 0) throw failures[0];
        return;
      }
      default:
        return; // closing (another close() runs) or closed already
    }
  }

  /** The key this client signs with (null: none). */
  get signingKey(): SigningKey | null {
    return this.connected?.key ?? null;
  }

  /**
   * An out-of-band SpillCompleted, SpillFailed or LossAcknowledged (contract §3, §4 step 0):
   * seq null, so it takes no place in the session's sequence; for operators' tools and spill
   * services. `eventId`: give the same one when repeating an answer (a redelivery is ignored).
   * Signed (contract §4b) by `options.signingKey` (default: the client's), unless the event
   * carries a signature already; `options.lastEventAt` (the session's, when known) is where the
   * validity starts if it is later than this clock. Resolves with the event as sent, once the
   * broker acknowledged it.
   */
  async outOfBand(
    event: OutOfBandEvent,
    eventId: string = randomUUID(),
    options: OutOfBandOptions = {},
  ): Promise<SignableEvent> {
    this.requireConnected('outOfBand');
    if (!isSignable(event))
      throw new GuardUsageError(
        'type',
        `expected one of ${SIGNABLE_EVENT_TYPES.join(', ')}, got ${JSON.stringify(event.type)}`,
      );
    const now = Date.now();
    const unsigned = outOfBand(event, { eventId, occurredAt: now });
    const key = options.signingKey !== undefined ? options.signingKey : this.signingKey;
    const full =
      unsigned.signature === null && key !== null
        ? signed(unsigned, key, expiryFrom(now, options.lastEventAt ?? null))
        : unsigned;
    await this.send(requireDecodable(full));
    return full;
  }

  /**
   * @internal This connection's Kafka client, for what reads beside the client on the same
   * connection: SpillWorker's consumer, `compaction-guard acknowledge`'s audit reader. A
   * transport-level connection, not a kafkajs `Kafka` (docs/decisions.md 237).
   */
  get kafkaClient(): KafkaConnection {
    return this.requireConnected('kafkaClient').kafka;
  }

  /** @internal This connection's registry, for the same readers as `kafkaClient`. */
  get registryCodec(): RegistryCodec {
    return this.requireConnected('registryCodec').codec;
  }

  /** Requests waiting for a verdict now (for metrics and tests). */
  get waiting(): number {
    return this.connected?.listener?.waiting ?? 0;
  }

  /**
   * All a session gets of its client (session/port.ts): sends, the client's key and its verdict
   * consumer, each checked against the client's state when used (a session outliving its
   * client's close() gets GuardClosedError).
   */
  private sessionPort(what: string): SessionPort {
    this.requireSessions(what);
    return {
      verdictTimeoutMs: this.verdictTimeoutMs,
      send: (event) => this.send(event),
      signedInBand: (event, lastEventAt) => {
        const key = this.signingKey;
        if (key === null || !isSignable(event)) return event;
        return signed(event, key, expiryFrom(event.occurredAt, lastEventAt));
      },
      expectVerdict: (sessionId, requestId, eventId) =>
        this.requireSessions('expectVerdict').expect(sessionId, requestId, eventId),
      forgetVerdict: (sessionId, requestId) =>
        this.connected?.listener?.forget(sessionId, requestId),
    };
  }

  /** Sends one event (key = sessionId); resolves when the broker acknowledged it. */
  private send(event: ContextEvent): Promise<void> {
    const { codec, sender } = this.requireConnected('send');
    const value =
      this.format === 'avro'
        ? codec.encodeEvent(event)
        : Buffer.from(JSON.stringify(event), 'utf8');
    return sender.send({ key: event.sessionId, value });
  }

  private requireConnected(what: string): Connected {
    this.lifecycle.requireOpen(what);
    return this.connected!;
  }

  /** The verdict consumer, for what needs one (sessions). */
  private requireSessions(what: string): VerdictListener {
    const { listener } = this.requireConnected(what);
    if (listener === null)
      throw new GuardUsageError(
        what,
        'this client was made with `verdicts: false` (out of band only): it has no sessions',
      );
    return listener;
  }

  /** `connect()`'s steps: open when they all succeed, else closed with nothing left open. */
  private async connectOrClose(): Promise<void> {
    const resources = new OpenResources();
    try {
      this.connected = await this.open(resources);
      this.lifecycle.to('open');
    } catch (e) {
      await resources.closeAll(this.log);
      this.lifecycle.to('closed');
      throw e;
    }
  }

  /** The steps of `connect()`; each thing opened is added to `resources` as soon as it is. */
  private async open(resources: OpenResources): Promise<Connected> {
    const env = this.options.env ?? process.env;
    const { config, embedded } = connectionOf(env, { overrides: this.options.config ?? {} });
    const key =
      this.options.signingKey !== undefined
        ? this.options.signingKey
        : (configuredSigningKey(env, {}, embedded)?.key ?? null);
    const clientId = `${config.clientId}-client`;
    // As `run`: no broker, wrong credentials or an untrusted certificate fail within seconds,
    // with one message naming the setting (a StartupError, as `run` reports it).
    await checkKafkaSecurity(config.brokers, clientId, this.log, config);
    const inputPartitions = await this.inputPartitions(config);
    const codec = RegistryCodec.fromConfig(config);
    resources.add('schema registry client', () => codec.close());
    await registered(codec, config);
    const kafka = await kafkaClient(config.brokers, clientId, this.log, config);
    const producer = kafka.idempotentProducer(this.log);
    resources.add('producer', () => producer.disconnect());
    await reachable(config, () => producer.connect());
    let listener: VerdictListener | null = null;
    if (this.options.verdicts !== false) {
      const verdicts = new VerdictListener(
        kafka,
        codec,
        config.verdictTopic,
        `${config.clientId}-verdicts`,
        this.log,
      );
      resources.add('verdict consumer', () => verdicts.stop());
      await reachable(config, () => verdicts.start());
      listener = verdicts;
    }
    const sender = new BatchedProducer(producer, config.inputTopic, inputPartitions);
    // Closed first: what was sent is acknowledged before the producer stops.
    resources.add('sends in flight', () => sender.flushed());
    return { config, kafka, codec, key, sender, listener, resources };
  }

  /**
   * The input topic's partitions, which pin every event to its partition
   * (src/kafka/kafkajs/checkedSend.ts). The processor creates the same topics the same way when it
   * starts (whichever comes first).
   */
  private async inputPartitions(config: Config): Promise<number> {
    // A few quick retries, not kafkajs' ~1 minute: nobody there is a clear error now.
    const kafka = await kafkaClient(
      config.brokers,
      `${config.clientId}-client`,
      this.log,
      config,
      2,
    );
    const admin = kafka.admin();
    await reachable(config, () => admin.connect());
    try {
      return await clientInputPartitions(admin, config, this.log);
    } finally {
      await admin.disconnect();
    }
  }
}

/** Settled either way: `close()` waits for a `connect()` whose failure is its own caller's. */
function settled(p: Promise<unknown>): Promise<void> {
  return p.then(
    () => undefined,
    () => undefined,
  );
}

/** A Kafka step after the preflight: its failure is KAFKA_UNREACHABLE, naming the setting. */
async function reachable<T>(config: Config, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    if (e instanceof OperationalError) throw e;
    throw new StartupError(
      'KAFKA_UNREACHABLE',
      `cannot reach Kafka at ${config.brokers.join(',')} (KAFKA_BROKERS): ${(e as Error).message}`,
      { cause: e },
    );
  }
}

/**
 * The schemas registered with the processor's patience (registerSchemas: a registry that stalls
 * past one call's timeout gets another attempt). The registry refusing us keeps its code,
 * anything else is unreachable.
 */
async function registered(codec: RegistryCodec, config: Config): Promise<void> {
  try {
    await registerSchemas(codec, config.registryUrl);
  } catch (failure) {
    // registerSchemas gave up: name the last failure in the client's words, with the count.
    const gaveUp = failure instanceof StartupError && failure.code === 'REGISTRY_UNREACHABLE';
    const e = gaveUp ? failure.cause : failure;
    const attempts = gaveUp ? ` (${REGISTRATION_ATTEMPTS} attempts)` : '';
    const message = `schema registry at ${config.registryUrl} (SCHEMA_REGISTRY_URL): ${(e as Error).message}${attempts}`;
    if (e instanceof OperationalError && e.code === 'REGISTRY_AUTH_FAILED')
      throw new StartupError('REGISTRY_AUTH_FAILED', message, { cause: e });
    // Names the registry, the subject and the status itself.
    if (e instanceof OperationalError && e.code === 'REGISTRY_SCHEMA_REFUSED')
      throw new StartupError('REGISTRY_SCHEMA_REFUSED', e.message, { cause: e });
    throw new StartupError('REGISTRY_UNREACHABLE', message, { cause: e });
  }
}
