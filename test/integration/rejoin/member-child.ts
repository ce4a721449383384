/**
 * One member of a @platformatic/kafka consumer group in a process of its own, so that a test
 * can stall it (SIGSTOP) past its session timeout. Prints what the group tells it, one JSON
 * line each: `revoked`, `assigned` (with the group's metadata), `crashed`; SIGTERM stops it.
 */
import { platformaticGroupConsumer } from '../../../src/kafka/platformatic/groupConsumer';
import type { GroupConsumerOptions } from '../../../src/kafka/transport/consumer';

const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

async function main(): Promise<void> {
  const options = JSON.parse(process.env.CG_TEST_GROUP_OPTIONS!) as GroupConsumerOptions;
  const bootstrapBrokers = process.env.KAFKA_BROKERS!.split(',');
  const member = platformaticGroupConsumer(
    { clientId: 'cg-rejoin-member', bootstrapBrokers },
    options,
  );
  process.once('SIGTERM', () => {
    void member.stop().finally(() => process.exit(0));
  });
  await member.start({
    revoked: (partitions) => say({ kind: 'revoked', partitions }),
    assigned: (partitions, group) => say({ kind: 'assigned', partitions, group }),
    crashed: (error) => say({ kind: 'crashed', error: String(error) }),
    batch: async (batch, control) => control.resolveOffset(batch.lastOffset()),
  });
}

main().catch((e: unknown) => {
  say({ kind: 'failed', error: String(e) });
  process.exit(1);
});
