/**
 * Upstream: tulios/kafkajs#1315 (kafkajs logs, at ERROR, broker answers it retries itself,
 * CONCURRENT_TRANSACTIONS among them; open). Applies to kafkajs 2.2.4.
 *
 * kafkajs' log levels in pino's, and the entries demoted to debug because they are part of a
 * healthy run.
 */
import { logLevel } from 'kafkajs';

/**
 * kafkajs' levels in pino's. Its INFO is its own lifecycle chatter ("Starting", "Consumer has
 * joined the group", "Pausing fetching from 1 topics"): the processor logs what a person needs
 * of that at info itself, so kafkajs' INFO goes to debug.
 */
const LEVELS: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'debug',
  [logLevel.DEBUG]: 'debug',
};

/** kafkajs' own threshold, from the pino logger's: kafkajs' logs follow CG_LOG_LEVEL. */
export function kafkajsLogLevel(pinoLevel: string): logLevel {
  switch (pinoLevel) {
    case 'trace':
    case 'debug':
      return logLevel.DEBUG;
    case 'info':
    case 'warn':
      // Its INFO would land at debug (LEVELS): not worth building.
      return logLevel.WARN;
    case 'silent':
      return logLevel.NOTHING;
    default:
      return logLevel.ERROR;
  }
}

/**
 * Broker answers that kafkajs logs at ERROR although it retries them and they are part of a
 * healthy run, so they belong at debug: CONCURRENT_TRANSACTIONS follows every transaction
 * whose predecessor's markers the coordinator is still writing (dozens a minute under load);
 * UNKNOWN_TOPIC_OR_PARTITION answers the metadata requests right after the processor created
 * its topics; COORDINATOR_NOT_AVAILABLE and COORDINATOR_LOAD_IN_PROGRESS answer the first
 * FindCoordinator of a fresh broker (its offsets topic is being created) and every coordinator
 * move. Matched by message text because that is all a kafkajs 2.2.4 log entry carries of the
 * broker's answer (`error: e.message`, no type or code).
 */
const EXPECTED_RETRY = new RegExp(
  [
    'another concurrent operation on the same transaction was ongoing',
    'This server does not host this topic-partition',
    'The group coordinator is not available',
    'The coordinator is loading and hence',
  ].join('|'),
);

/** The pino level of one kafkajs log entry. */
export function kafkajsEntryLevel(
  level: logLevel,
  entry: { message: string; error?: unknown },
): 'error' | 'warn' | 'info' | 'debug' {
  const text = `${entry.message} ${typeof entry.error === 'string' ? entry.error : ''}`;
  if (level <= logLevel.WARN && EXPECTED_RETRY.test(text)) return 'debug';
  return LEVELS[level] ?? 'info';
}
