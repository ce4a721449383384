/**
 * What each principal needs on a cluster with an authorizer: every topic, group and
 * transactional id a component of this repository uses, with the operations it performs on
 * them (derived from the code that uses them, named in `why`). Nothing else: an orchestrator
 * cannot write a verdict, a changelog record or a spill request, so it cannot forge an answer.
 * The ACL table of docs/operations.md and test/integration/security.test.ts (which runs the processor and an
 * orchestrator under exactly these grants) both come from here.
 */
import type { Config, TOPIC_KEYS } from '../config/config';

export const ROLES = ['processor', 'orchestrator', 'spill-service', 'operator'] as const;
export type Role = (typeof ROLES)[number];

export type AclResource = 'TOPIC' | 'GROUP' | 'TRANSACTIONAL_ID';
export type AclPattern = 'LITERAL' | 'PREFIXED';
/** READ, WRITE and DESCRIBE_CONFIGS imply DESCRIBE (Kafka's rule), so DESCRIBE is never listed. */
export type AclOperation = 'READ' | 'WRITE' | 'CREATE' | 'DESCRIBE_CONFIGS';

export interface AclGrant {
  resource: AclResource;
  pattern: AclPattern;
  name: string;
  operations: AclOperation[];
  /** The code that needs it. */
  why: string;
}

type Names = Pick<Config, (typeof TOPIC_KEYS)[number] | 'groupId' | 'clientId'>;

const topic = (name: string, operations: AclOperation[], why: string): AclGrant => ({
  resource: 'TOPIC',
  pattern: 'LITERAL',
  name,
  operations,
  why,
});

/**
 * The processor: reads the input in its group, writes every output in transactions whose ids
 * start with `<group>-<input>-`, restores from the changelog in throwaway groups
 * `<group>.restore.<uuid>`, and creates the topics that are absent (CREATE and DESCRIBE_CONFIGS
 * are for src/kafka/topics.ts: drop CREATE when an administrator creates the topics).
 */
function processor(c: Names): AclGrant[] {
  const made = ['CREATE', 'DESCRIBE_CONFIGS'] as const;
  const outputs = [c.verdictTopic, c.spillTopic, c.auditTopic, c.dlqTopic].map((t) =>
    topic(t, ['WRITE', ...made], 'outputs, in each batch transaction (src/kafka/transaction.ts)'),
  );
  return [
    topic(
      c.inputTopic,
      ['READ', ...made],
      'the input, in its consumer group (src/kafka/processor.ts)',
    ),
    ...outputs,
    topic(
      c.changelogTopic,
      ['READ', 'WRITE', ...made],
      'session state: written in each transaction, read back on assignment (src/kafka/restore.ts)',
    ),
    {
      resource: 'GROUP',
      pattern: 'LITERAL',
      name: c.groupId,
      operations: ['READ'],
      why: "the input's consumer group; offsets committed in the transactions",
    },
    {
      resource: 'GROUP',
      pattern: 'PREFIXED',
      name: `${c.groupId}.restore.`,
      operations: ['READ'],
      why: 'one throwaway group per changelog restore',
    },
    {
      resource: 'TRANSACTIONAL_ID',
      pattern: 'PREFIXED',
      // transactionalId(c, partition) in src/kafka/transaction.ts, without the partition.
      name: `${c.groupId}-${c.inputTopic}-`,
      operations: ['WRITE'],
      why: 'one transactional producer per input partition',
    },
  ];
}

/** Groups of the client library and the on-call commands: `<clientId>-verdicts-<uuid>`, `-tail.`, ... */
const clientGroups = (c: Names, why: string): AclGrant => ({
  resource: 'GROUP',
  pattern: 'PREFIXED',
  name: `${c.clientId}-`,
  operations: ['READ'],
  why,
});

/**
 * An orchestrator (GuardClient): writes its sessions' events, reads the verdicts (a group of
 * its own per client), and the spill requests when it runs a SpillWorker itself.
 */
function orchestrator(c: Names): AclGrant[] {
  return [
    topic(c.inputTopic, ['WRITE'], "its sessions' events (GuardClient)"),
    topic(c.verdictTopic, ['READ'], "the verdicts (GuardClient's verdict listener)"),
    topic(c.spillTopic, ['READ'], 'spill requests, for a SpillWorker it runs itself'),
    clientGroups(
      c,
      'the verdict listener `<clientId>-verdicts-<uuid>`, the SpillWorker `<clientId>-spill-worker`',
    ),
  ];
}

/** A spill service (SpillWorker on a GuardClient): reads spill requests, answers out of band. */
function spillService(c: Names): AclGrant[] {
  return [
    topic(c.inputTopic, ['WRITE'], 'SpillCompleted / SpillFailed, out of band'),
    topic(c.spillTopic, ['READ'], 'the spill requests (SpillWorker)'),
    topic(c.verdictTopic, ['READ'], "GuardClient's verdict listener, started by connect()"),
    clientGroups(
      c,
      'the SpillWorker `<clientId>-spill-worker`, the verdict listener `<clientId>-verdicts-<uuid>`',
    ),
  ];
}

/** An operator (tail, inspect, acknowledge, simulate): reads everything, writes the input. */
function operator(c: Names): AclGrant[] {
  return [
    topic(c.inputTopic, ['READ', 'WRITE'], 'acknowledge and simulate write events'),
    ...[c.verdictTopic, c.spillTopic, c.dlqTopic].map((t) => topic(t, ['READ'], 'tail')),
    topic(c.auditTopic, ['READ'], 'tail; acknowledge waits for its answer there'),
    topic(c.changelogTopic, ['READ'], 'investigation (no command reads it)'),
    clientGroups(c, 'throwaway readers `<clientId>-tail.<uuid>`, `<clientId>-acknowledge.<uuid>`'),
  ];
}

export function aclsFor(role: Role, c: Names): AclGrant[] {
  switch (role) {
    case 'processor':
      return processor(c);
    case 'orchestrator':
      return orchestrator(c);
    case 'spill-service':
      return spillService(c);
    case 'operator':
      return operator(c);
  }
}
