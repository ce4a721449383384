/**
 * The platformatic group consumer keeps a partition across two joins only when no other member
 * can have owned it in between (src/kafka/platformatic/assignment.ts, `membershipContinues`):
 * the library rejoins silently after an eviction, and a member let back in under a new member
 * id, or one that missed a generation, must restore what it gets back instead of keeping a
 * stale state (docs/decisions.md 241).
 */
import fc from 'fast-check';
import {
  assignmentChange,
  membershipContinues,
  type Membership,
} from '../../src/kafka/platformatic/assignment';

describe('membershipContinues', () => {
  it('holds for the same member id in the very next generation only', () => {
    const m = (generationId: number | null, memberId: string | null): Membership => ({
      generationId,
      memberId,
    });
    expect(membershipContinues(m(4, 'a'), m(5, 'a'))).toBe(true);
    expect(membershipContinues(m(4, 'a'), m(6, 'a'))).toBe(false); // a generation missed
    expect(membershipContinues(m(4, 'a'), m(5, 'b'))).toBe(false); // evicted, let back in
    expect(membershipContinues(m(4, 'a'), m(4, 'a'))).toBe(false); // the same join told twice
    expect(membershipContinues(null, m(1, 'a'))).toBe(false); // the first join
    expect(membershipContinues(m(null, 'a'), m(5, 'a'))).toBe(false); // generation unknown
    expect(membershipContinues(m(4, null), m(5, null))).toBe(false);
  });

  it('a join that does not continue revokes all that was held and adds all that is assigned', () => {
    expect(assignmentChange([0, 2], [2, 1], false)).toEqual({ revoked: [0, 2], added: [1, 2] });
    expect(assignmentChange([0, 2], [2, 1], true)).toEqual({ revoked: [0], added: [1] });
  });
});

/**
 * A random history of a group: per generation, the owner of each partition among members
 * 'm' (the one watched), 'x' and 'y', and the member id 'm' had in it (an eviction gives it a
 * new one). 'm' is told a random subset of the generations it was in (the others it missed).
 */
const PARTITIONS = 4;
const history = fc
  .array(
    fc.record({
      owners: fc.array(fc.constantFrom('m', 'x', 'y'), {
        minLength: PARTITIONS,
        maxLength: PARTITIONS,
      }),
      evicted: fc.boolean(),
      told: fc.boolean(),
    }),
    { minLength: 2, maxLength: 12 },
  )
  .map((gens) => {
    let incarnation = 0;
    return gens.map((g, i) => {
      if (g.evicted) incarnation += 1;
      return { generationId: i + 1, memberId: `m-${incarnation}`, ...g };
    });
  });

describe('partitions kept across joins (property)', () => {
  it('a partition kept from one join to the next was owned by the same member in every generation between', () => {
    fc.assert(
      fc.property(history, (gens) => {
        const told = gens.filter((g) => g.told);
        let before: (typeof told)[number] | null = null;
        let held: number[] = [];
        for (const g of told) {
          const now = g.owners.flatMap((o, p) => (o === 'm' ? [p] : []));
          const { revoked, added } = assignmentChange(held, now, membershipContinues(before, g));
          // What was held and is not revoked is kept; it is what is assigned, less what is added.
          const kept = held.filter((p) => !revoked.includes(p));
          expect([...kept, ...added].sort()).toEqual(now);
          for (const p of kept)
            for (const between of gens.slice(before!.generationId - 1, g.generationId))
              expect({ p, owner: between.owners[p], memberId: between.memberId }).toEqual({
                p,
                owner: 'm',
                memberId: g.memberId,
              });
          held = now;
          before = g;
        }
      }),
    );
  });
});
