/**
 * BACKWARD compatibility, as the schema registry checks it for our subjects: a consumer using
 * the new schema can read everything written with the old one. avsc proves it by building a
 * resolver (reader = new, writer = old), which fails exactly when some old data could not be
 * read: a new field without a default, a removed enum symbol, a changed field type...
 * How to use it for a future version: see schemas/README.md.
 */
import { Type } from 'avsc';
import { parseEventSchema } from './schemas';

function parse(schemaJson: string): Type {
  const schema: unknown = JSON.parse(schemaJson);
  if (Array.isArray(schema)) return parseEventSchema(schemaJson).union;
  return Type.forSchema(schema as Parameters<typeof Type.forSchema>[0], { wrapUnions: 'never' });
}

/** Why `newSchema` cannot read data written with `oldSchema`, or null when it can. */
export function backwardIncompatibility(newSchema: string, oldSchema: string): string | null {
  try {
    parse(newSchema).createResolver(parse(oldSchema));
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}
