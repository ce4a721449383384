/**
 * The one exhaustiveness check: the `default` of a switch that handles every member of a closed
 * union (an event's `type`, above all). There the value has type `never`, so a member added to
 * the union (a new record in schemas/context-change-event.avsc) fails the type check at every
 * switch that does not handle it yet: test/unit/schema-types.test.ts ("a new event type") lists
 * them. Reached at run time only by a value the types rule out (a cast); it throws rather than
 * let such a value fall through silently.
 */
export function unreachable(value: never): never {
  const type = (value as { type?: unknown } | null)?.type;
  throw new Error(`unhandled ${type === undefined ? String(value) : `type ${String(type)}`}`);
}
