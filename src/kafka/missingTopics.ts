/**
 * What a client says about the two topics it needs (the input it writes, the verdicts it reads)
 * when they are not there at connect. A processor creates all its topics together, so a
 * verdict topic missing beside an existing input topic most likely means the client's
 * CG_VERDICT_TOPIC is not the processor's: its requests would wait for verdicts that never come
 * (GuardTimeoutError). Pure: the lines only.
 */
import type { Config } from '../config/config';

/** The topics a client needs that `existing` lacks, each with its setting. */
export function missingClientTopics(
  c: Pick<Config, 'inputTopic' | 'verdictTopic'>,
  existing: ReadonlySet<string>,
): { topic: string; setting: string }[] {
  return [
    { topic: c.inputTopic, setting: 'CG_INPUT_TOPIC' },
    { topic: c.verdictTopic, setting: 'CG_VERDICT_TOPIC' },
  ].filter((t) => !existing.has(t.topic));
}

const named = (missing: { topic: string; setting: string }[]) =>
  missing.map((t) => `${t.topic} (${t.setting})`).join(' and ');

/** The line when they could not be created: which, why, and how to have them. */
export function uncreatableTopicsMessage(
  missing: { topic: string; setting: string }[],
  cause: string,
  partitions: number,
): string {
  const create = missing
    .map((t) => `kafka-topics.sh --create --topic ${t.topic} --partitions ${partitions}`)
    .join('; ');
  const [topic, it, does] =
    missing.length === 1 ? ['topic', 'it', 'does'] : ['topics', 'them', 'do'];
  return (
    `${topic} ${named(missing)} ${does} not exist and this client could not create ${it} (${cause}): ` +
    `start the processor once (it creates its topics), create ${it} (${create}), ` +
    "or check that the setting names the processor's topic"
  );
}

/** The warning when the verdict topic was created beside an existing input topic. */
export function createdVerdictTopicWarning(c: Pick<Config, 'inputTopic' | 'verdictTopic'>): string {
  return (
    `the verdict topic ${c.verdictTopic} (CG_VERDICT_TOPIC) did not exist although ${c.inputTopic} does, so it was created: ` +
    "no processor has answered on it yet; if requests time out, set CG_VERDICT_TOPIC to the processor's"
  );
}
