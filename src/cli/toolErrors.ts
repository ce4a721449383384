/** Exit statuses and messages of the on-call commands: a sentence, never a stack trace, for what a person can fix. */
import { ConfigError } from '../config/config';
import { KafkaSecurityError } from '../kafka/client';
import { RegistryAuthError } from '../registry/codec';
import { MissingTopicError } from './topicReader';

/** The user's input or configuration is wrong; nothing was sent. */
export class UsageError extends Error {}

/** No answer from the processor's HTTP server. */
export class ProcessorUnreachableError extends Error {}

export async function reportToolError(command: string, f: () => Promise<void>): Promise<void> {
  try {
    await f();
  } catch (e) {
    const message = (e as Error).message;
    const prefix = message.startsWith(`compaction-guard ${command}:`)
      ? ''
      : `compaction-guard ${command}: `;
    if (e instanceof ConfigError || e instanceof UsageError || e instanceof MissingTopicError) {
      process.stderr.write(`${prefix}${message}\n`);
      process.exitCode = 2;
      return;
    }
    if (
      e instanceof KafkaSecurityError ||
      e instanceof RegistryAuthError ||
      e instanceof ProcessorUnreachableError ||
      /ECONNREFUSED|ENOTFOUND|Connection error|KafkaJSNumberOfRetriesExceeded|KafkaJSConnectionError/.test(
        `${(e as Error).name} ${message}`,
      )
    ) {
      process.stderr.write(`${prefix}${message}\n`);
      process.exitCode = 3;
      return;
    }
    throw e;
  }
}
