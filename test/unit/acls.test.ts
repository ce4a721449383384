/**
 * The ACL grants (src/kafka/acls.ts) name what the code uses: the processor's transactional ids
 * and groups, the client's and tools' groups; and the ACL table of docs/operations.md is exactly
 * those grants for the default names. (test/integration/security.test.ts runs the processor and
 * an orchestrator under them on a broker with StandardAuthorizer.)
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { DEFAULTS, type Config } from '../../src/config/config';
import { type AclGrant, aclsFor, ROLES } from '../../src/kafka/acls';
import { transactionalId } from '../../src/kafka/transaction';
import { kafkaAclsCommands } from '../../src/cli/acls';

const DOC = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');

/** Whether `grants` allow `operation` on the resource `name`. */
function allows(grants: AclGrant[], resource: AclGrant['resource'], name: string, op: string) {
  return grants.some(
    (g) =>
      g.resource === resource &&
      (g.pattern === 'LITERAL' ? g.name === name : name.startsWith(g.name)) &&
      g.operations.includes(op as AclGrant['operations'][number]),
  );
}

const names = fc.record({
  groupId: fc.stringMatching(/^[a-z][a-z0-9._-]{0,15}$/),
  clientId: fc.stringMatching(/^[a-z][a-z0-9._-]{0,15}$/),
  inputTopic: fc.stringMatching(/^[a-z][a-z0-9._-]{0,15}$/),
});

describe('ACL grants', () => {
  it('property: the processor may write as every one of its transactional ids, join its group and each restore group', () => {
    fc.assert(
      fc.property(names, fc.nat(1_000), fc.uuid(), (n, partition, uuid) => {
        const c: Config = { ...DEFAULTS, ...n };
        const g = aclsFor('processor', c);
        expect(allows(g, 'TRANSACTIONAL_ID', transactionalId(c, partition), 'WRITE')).toBe(true);
        expect(allows(g, 'GROUP', c.groupId, 'READ')).toBe(true);
        // src/kafka/restore.ts: `${groupPrefix}.restore.${randomUUID()}`, groupPrefix = groupId.
        expect(allows(g, 'GROUP', `${c.groupId}.restore.${uuid}`, 'READ')).toBe(true);
        // Not another instance group's transactional ids or groups.
        expect(allows(g, 'TRANSACTIONAL_ID', `x${transactionalId(c, partition)}`, 'WRITE')).toBe(
          false,
        );
      }),
    );
  });

  it("an orchestrator's and a spill service's groups are the client's (<clientId>-verdicts-<uuid>, <clientId>-spill-worker)", () => {
    for (const role of ['orchestrator', 'spill-service'] as const) {
      const g = aclsFor(role, DEFAULTS);
      for (const group of ['compaction-guard-verdicts-0f4e', 'compaction-guard-spill-worker'])
        expect([role, group, allows(g, 'GROUP', group, 'READ')]).toEqual([role, group, true]);
    }
  });

  it('only the processor may write an output topic; every role but the processor writes the input', () => {
    const c = DEFAULTS;
    for (const role of ROLES) {
      const g = aclsFor(role, c);
      for (const t of [c.verdictTopic, c.spillTopic, c.auditTopic, c.dlqTopic, c.changelogTopic])
        expect([role, t, allows(g, 'TOPIC', t, 'WRITE')]).toEqual([role, t, role === 'processor']);
      expect([role, allows(g, 'TOPIC', c.inputTopic, 'WRITE')]).toEqual([
        role,
        role !== 'processor',
      ]);
    }
  });

  it('the ACL table of docs/operations.md is exactly the grants for the default names', () => {
    const rendered = ROLES.flatMap((role) =>
      aclsFor(role, DEFAULTS).map(
        (g) =>
          `| ${role} | ${g.resource} | \`${g.name}\`${g.pattern === 'PREFIXED' ? ' (prefix)' : ''} | ${g.operations.join(', ')} | ${g.why} |`,
      ),
    );
    const start = DOC.indexOf('| principal | resource | name | operations | why |');
    expect(start).toBeGreaterThan(0);
    const table = DOC.slice(start)
      .split('\n')
      .slice(2)
      .filter((_, i, all) => all.slice(0, i + 1).every((l) => l.startsWith('|')));
    expect(table).toEqual(rendered);
  });

  it('kafka-acls.sh lines: one per grant, its operations, a prefix pattern where it is one, odd names quoted', () => {
    expect(
      kafkaAclsCommands(
        "User:o'brien",
        aclsFor('orchestrator', { ...DEFAULTS, clientId: 'orch 1' }),
      ),
    ).toEqual([
      `kafka-acls.sh --bootstrap-server "$KAFKA_BROKERS" --command-config admin.properties --add --allow-principal 'User:o'\\''brien' --operation Write --topic agent.context-changes`,
      `kafka-acls.sh --bootstrap-server "$KAFKA_BROKERS" --command-config admin.properties --add --allow-principal 'User:o'\\''brien' --operation Read --topic agent.compaction-verdicts`,
      `kafka-acls.sh --bootstrap-server "$KAFKA_BROKERS" --command-config admin.properties --add --allow-principal 'User:o'\\''brien' --operation Read --topic agent.spill-requests`,
      `kafka-acls.sh --bootstrap-server "$KAFKA_BROKERS" --command-config admin.properties --add --allow-principal 'User:o'\\''brien' --operation Read --group 'orch 1-' --resource-pattern-type prefixed`,
    ]);
  });

  it('`compaction-guard acls` prints them for the names given as flags or env vars; a bad role exits 2', () => {
    const cli = (args: string[], env: Record<string, string> = {}) =>
      spawnSync(process.execPath, ['bin/compaction-guard.js', 'acls', ...args], {
        cwd: join(__dirname, '..', '..'),
        env: { PATH: process.env.PATH, ...env },
        encoding: 'utf8',
      });
    const r = cli(['--role', 'processor', '--principal', 'User:guard', '--group-id', 'g1'], {
      CG_INPUT_TOPIC: 'in',
    });
    expect([r.status, r.stderr]).toEqual([0, '']);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(aclsFor('processor', DEFAULTS).length);
    expect(lines).toContain(
      'kafka-acls.sh --bootstrap-server "$KAFKA_BROKERS" --command-config admin.properties --add --allow-principal User:guard --operation Write --transactional-id g1-in- --resource-pattern-type prefixed',
    );
    expect(lines).toContain(
      'kafka-acls.sh --bootstrap-server "$KAFKA_BROKERS" --command-config admin.properties --add --allow-principal User:guard --operation Read --operation Create --operation DescribeConfigs --topic in',
    );
    const bad = cli(['--role', 'admin', '--principal', 'User:x']);
    expect([bad.status, bad.stdout, bad.stderr]).toEqual([
      2,
      '',
      'compaction-guard acls: --role: expected one of processor, orchestrator, spill-service, operator, got "admin"\n',
    ]);
  });
});
