/** A kafkajs client whose logs go through pino (one JSON log stream). */
import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { Logger } from 'pino';

const LEVELS: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

export function kafkaClient(brokers: string[], clientId: string, log: Logger): Kafka {
  const kafkaLog = log.child({ component: 'kafkajs' });
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.WARN,
    retry: { retries: 8, initialRetryTime: 200 },
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, ...rest } = entry;
        kafkaLog[LEVELS[level] ?? 'info'](rest, message);
      },
  });
}
