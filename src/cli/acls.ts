/**
 * `compaction-guard acls --role ROLE --principal User:NAME`: the `kafka-acls.sh` commands that
 * give one principal what its role needs (src/kafka/acls.ts), with the topic, group and client
 * names of the same settings as `run` (env vars, flags win). Prints; changes nothing.
 */
import { Command } from 'commander';
import { loadConfig, optionHelp, TOPIC_KEYS } from '../config/config';
import { type AclGrant, type AclOperation, aclsFor, ROLES, type Role } from '../kafka/acls';
import { UsageError } from './toolErrors';
import { TOOL_FAILURES, reportingFailures } from './failures';

/** The settings that name what the grants are on. */
const NAME_KEYS = [...TOPIC_KEYS, 'groupId', 'clientId'] as const;

const OPERATION_NAMES: Record<AclOperation, string> = {
  READ: 'Read',
  WRITE: 'Write',
  CREATE: 'Create',
  DESCRIBE_CONFIGS: 'DescribeConfigs',
};

/** A word for a POSIX shell: as it is when it is plain, else single-quoted. */
function shellWord(s: string): string {
  return /^[\w.:@/=+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** One `kafka-acls.sh --add` line per grant. */
export function kafkaAclsCommands(principal: string, grants: readonly AclGrant[]): string[] {
  return grants.map((g) => {
    const resource = { TOPIC: '--topic', GROUP: '--group', TRANSACTIONAL_ID: '--transactional-id' }[
      g.resource
    ];
    return [
      'kafka-acls.sh --bootstrap-server "$KAFKA_BROKERS" --command-config admin.properties --add',
      `--allow-principal ${shellWord(principal)}`,
      ...g.operations.map((o) => `--operation ${OPERATION_NAMES[o]}`),
      `${resource} ${shellWord(g.name)}`,
      ...(g.pattern === 'PREFIXED' ? ['--resource-pattern-type prefixed'] : []),
    ].join(' ');
  });
}

export function aclsCommand(): Command {
  const cmd = new Command('acls')
    .description(
      'Print the kafka-acls.sh commands that give a principal exactly what its role needs (docs/operations.md, "Kafka ACLs"); sends nothing.',
    )
    .requiredOption('--role <role>', `one of ${ROLES.join(', ')}`)
    .requiredOption('--principal <principal>', 'the Kafka principal, e.g. User:compaction-guard');
  for (const key of NAME_KEYS) {
    const { flags, description } = optionHelp(key);
    cmd.option(flags, description);
  }
  return cmd
    .addHelpText(
      'after',
      '\nUse the same CG_* names as the component the principal runs. Exit status: 0 printed; 2 invalid options.',
    )
    .action((opts: Record<string, string | undefined>) =>
      reportingFailures('acls', TOOL_FAILURES, async () => {
        const role = opts.role as Role;
        if (!ROLES.includes(role))
          throw new UsageError(
            `--role: expected one of ${ROLES.join(', ')}, got ${JSON.stringify(opts.role)}`,
          );
        if (!/^[A-Za-z]+:.+$/.test(opts.principal ?? ''))
          throw new UsageError(
            `--principal: expected TYPE:NAME such as User:compaction-guard, got ${JSON.stringify(opts.principal)}`,
          );
        const names: Record<string, string | undefined> = {};
        for (const key of NAME_KEYS) names[key] = opts[key];
        const config = loadConfig(process.env, names);
        process.stdout.write(
          `${kafkaAclsCommands(opts.principal!, aclsFor(role, config)).join('\n')}\n`,
        );
      }),
    );
}
