/**
 * A spill service apart from the orchestrator (contract §3 and §4 step 0): it reads the
 * spill requests (read_committed), writes what its source holds of each requested range to a
 * SpillStore, and answers out of band (SpillCompleted / SpillFailed with seq null), so it needs
 * no share of any session's sequence. Workers of one group split the spill-request partitions.
 *
 * A spill request is not a proof (contract §4b): anyone who can write the input topic
 * can make the processor ask for any range of any session. So the worker signs a
 * SpillCompleted only over the positions it stored and read back (`storeVouched`, the rule the
 * client's own spill loop follows too), and a SpillFailed when that is none of them: a session
 * its source has no transcript of, or a range that starts beyond what the source holds
 * (test/integration/spill-vouch.test.ts, test/unit/spill-vouch.test.ts "SpillWorker answers
 * only for what it stored").
 */
import type { TopicConsumer } from '../kafka/transport';
import pino, { type Logger } from 'pino';
import type { SpillRequest } from '../engine/outputs';
import { spillRequestType } from '../schema/schemas';
import type { GuardClient } from './client';
import type { SpillStore } from './spill';
import { SchemaReaders } from '../registry/schemaReaders';
import { readWireHeader } from '../registry/wireFormat';
import { failureText } from './transcript';
import type { SigningKey } from '../authority/signing';
import { storeVouched, type TranscriptPiece } from './vouch';
import { SpillStoreError } from './errors';
import { IgnoredAnswers } from './ignoredAnswers';

/**
 * What a source holds of one session's transcript for a spill request: the pieces with their
 * positions (`turnPiece` for whole turns), or null when it has no transcript of that session
 * (the request is then answered SpillFailed). Only the pieces' positions in the request's unit
 * count, and only from the request's start without a hole: the worker signs that and no more.
 */
export type SpillSourceAnswer = readonly TranscriptPiece[] | null;

/** The transcript a request asks for, as the source holds it. */
export type SpillSource = (request: SpillRequest) => SpillSourceAnswer | Promise<SpillSourceAnswer>;

export interface SpillWorkerOptions {
  store: SpillStore;
  source: SpillSource;
  /** Consumer group of the workers (default `<clientId>-spill-worker`). */
  groupId?: string;
  /**
   * The spill service's own key (role SPILL in the processor's ring, contract §4b): signs every
   * SpillCompleted and SpillFailed it sends. Default: the client's key; null: unsigned.
   */
  signingKey?: SigningKey | null;
}

export class SpillWorker {
  private consumer: TopicConsumer | null = null;
  private readonly readers: SchemaReaders;
  /** Spill requests answered so far (SpillCompleted or SpillFailed sent). */
  answered = 0;
  /** Says once per session when a request asks again for what the worker answered. */
  private readonly ignored: IgnoredAnswers;

  constructor(
    private readonly client: GuardClient,
    private readonly options: SpillWorkerOptions,
    private readonly log: Logger = pino({ level: 'warn' }),
  ) {
    this.readers = new SchemaReaders(client.registryCodec.registry);
    this.ignored = new IgnoredAnswers(log);
  }

  /** Joins the group and answers spill requests from the group's committed position on. */
  async start(): Promise<void> {
    const config = this.client.config;
    // One at a time, offsets committed after the answer: a crash answers again, and the answer's
    // eventId is derived from the spillRequestId, so the processor ignores the repeat (step 0).
    // A request that was not answered (its decoding failed with the registry, or the answer
    // could not be sent) throws: no offset is committed for it and it is read again.
    const consumer = this.client.kafkaClient.topicConsumer({
      groupId: this.options.groupId ?? `${config.clientId}-spill-worker`,
      topics: [config.spillTopic],
      fromBeginning: true,
      maxWaitMs: 100,
      commitOffsets: true,
    });
    this.consumer = consumer;
    await consumer.start({
      eachRecord: async (_topic, _partition, message) => {
        if (message.value === null) return;
        if (readWireHeader(message.value) === null) {
          // Not a record of the processor's at all (only it writes this topic): nothing to answer.
          this.log.error(
            { offset: message.offset },
            'a record that is not a spill request skipped',
          );
          return;
        }
        const request = await this.readers.read<SpillRequest>(
          spillRequestType,
          message.value,
          'spill request',
        );
        await this.answer(request);
      },
    });
  }

  async stop(): Promise<void> {
    await this.consumer?.stop();
    this.consumer = null;
  }

  /** @internal Answers one spill request (SpillCompleted for what was stored, or SpillFailed). */
  async answer(r: SpillRequest): Promise<void> {
    const eventId = `spill-answer:${r.spillRequestId}`;
    // The validity starts at the request's time if the orchestrator's clock is ahead of ours.
    const sign = {
      signingKey:
        this.options.signingKey !== undefined ? this.options.signingKey : this.client.signingKey,
      lastEventAt: r.requestedAt,
    };
    this.ignored.check(r);
    let stored: { handle: string; range: { start: number; end: number } };
    try {
      stored = await storeVouched(
        this.options.store,
        { sessionId: r.sessionId, spillRequestId: r.spillRequestId, unit: r.unit, range: r.range },
        await this.options.source(r),
      );
    } catch (e) {
      // A store that cannot write is the worker's own fault: said here, where it can be fixed.
      if (e instanceof SpillStoreError) this.log.error({ sessionId: r.sessionId }, e.message);
      const failed = await this.client.outOfBand(
        {
          type: 'SpillFailed',
          sessionId: r.sessionId,
          spillRequestId: r.spillRequestId,
          error: failureText(e),
        },
        eventId,
        sign,
      );
      this.ignored.answered(r.sessionId, failed);
      this.answered++;
      return;
    }
    const completed = await this.client.outOfBand(
      {
        type: 'SpillCompleted',
        sessionId: r.sessionId,
        spillRequestId: r.spillRequestId,
        handle: stored.handle,
        unit: r.unit,
        // What was stored and read back, never more than was asked (contract §4b).
        range: stored.range,
      },
      eventId,
      sign,
    );
    this.ignored.answered(r.sessionId, completed);
    this.answered++;
  }
}
