/**
 * The topics a client needs at connect (src/kafka/topics.ts clientInputPartitions,
 * src/kafka/missingTopics.ts): one missing that cannot be created is TOPIC_MISSING, one line
 * naming the topic, its setting, the cause and how to create it; a verdict topic created
 * beside an existing input is said at warn (its requests would otherwise only time out).
 */
import type { TransportAdmin } from '../../src/kafka/transport';
import { DEFAULTS } from '../../src/config/config';
import { clientInputPartitions } from '../../src/kafka/topics';
import {
  createdVerdictTopicWarning,
  missingClientTopics,
  uncreatableTopicsMessage,
} from '../../src/kafka/missingTopics';

const config = { ...DEFAULTS, inputTopic: 'ctx', verdictTopic: 'verdicts-typo', partitions: 6 };

describe('missing client topics', () => {
  it('names each missing topic with its setting', () => {
    expect(missingClientTopics(config, new Set(['ctx']))).toEqual([
      { topic: 'verdicts-typo', setting: 'CG_VERDICT_TOPIC' },
    ]);
    expect(missingClientTopics(config, new Set(['ctx', 'verdicts-typo']))).toEqual([]);
  });

  it('a verdict topic that cannot be created: TOPIC_MISSING at connect, one line naming the topic, the setting, the cause and the command that creates it', async () => {
    const admin = {
      listTopics: () => Promise.resolve(['ctx']),
      brokerCount: () => Promise.resolve(1),
      createTopics: () => Promise.reject(new Error('Topic authorization failed')),
    } as unknown as TransportAdmin;
    const error = await clientInputPartitions(admin, config).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TOPIC_MISSING' });
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    expect(message).toBe(
      uncreatableTopicsMessage(
        [{ topic: 'verdicts-typo', setting: 'CG_VERDICT_TOPIC' }],
        'Topic authorization failed',
        6,
      ),
    );
    expect(message).toMatch(
      /^topic verdicts-typo \(CG_VERDICT_TOPIC\) does not exist and this client could not create it \(Topic authorization failed\): .*kafka-topics\.sh --create --topic verdicts-typo --partitions 6/,
    );
  });

  it('the warning for a verdict topic created beside an existing input names CG_VERDICT_TOPIC', () => {
    expect(createdVerdictTopicWarning(config)).toMatch(
      /^the verdict topic verdicts-typo \(CG_VERDICT_TOPIC\) did not exist although ctx does.*set CG_VERDICT_TOPIC/,
    );
  });
});
