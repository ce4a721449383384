#!/usr/bin/env node
/**
 * Generates the contract's TypeScript types from the Avro schemas in `schemas/` into
 * `src/engine/contract.ts`: the one source of the engine's event and output types (events.ts
 * and outputs.ts re-export them), of the closed code lists (each enum's symbols as a const
 * array) and of the signable event types (the union's records with a `signature` field). A schema change the code does not follow fails `tsc`; a schema changed without
 * regenerating fails test/unit/schema-types.test.ts.
 *
 *   node scripts/gen-types.mjs           write src/engine/contract.ts
 *   node scripts/gen-types.mjs --check   exit 1 when the file is stale
 *   node scripts/gen-types.mjs --stdout  print the output
 *   node scripts/gen-types.mjs --stdout --schema-dir DIR   generate from other schema files
 *
 * Plain Node (no ts-node in this project). ES module so that it needs no CommonJS globals.
 */
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'src/engine/contract.ts');
const SCHEMA_FILES = [
  'context-change-event.avsc',
  'verdict.avsc',
  'spill-request.avsc',
  'audit-record.avsc',
];
const PRIMITIVES = {
  null: 'null',
  boolean: 'boolean',
  int: 'number',
  long: 'number',
  float: 'number',
  double: 'number',
  bytes: 'Buffer',
  string: 'string',
};

const shortName = (name) => name.slice(name.lastIndexOf('.') + 1);
const fullName = (name, namespace) => (name.includes('.') ? name : `${namespace}.${name}`);
const isNamed = (node) => ['record', 'enum', 'fixed'].includes(node?.type);

/** A type as a reference: named types by full name (their definitions are compared apart). */
function ref(node, namespace) {
  if (typeof node === 'string') return PRIMITIVES[node] ? node : fullName(node, namespace);
  if (Array.isArray(node)) return node.map((n) => ref(n, namespace));
  if (isNamed(node)) return fullName(node.name, node.namespace ?? namespace);
  if (node.type === 'array') return { type: 'array', items: ref(node.items, namespace) };
  if (node.type === 'map') return { type: 'map', values: ref(node.values, namespace) };
  return ref(node.type, namespace);
}

/** What must agree between two definitions of one name: not docs, not inline-vs-reference. */
function signature(node, namespace) {
  const { type, symbols, size } = node;
  const fields = node.fields?.map((f) => ({ n: f.name, t: ref(f.type, namespace), d: f.default }));
  return JSON.stringify({ type, symbols, size, default: node.default, fields });
}

/** Named types by full name, in first-definition order; a name means one type everywhere. */
class NamedTypes {
  constructor() {
    this.byName = new Map();
  }
  define(name, node) {
    const namespace = name.slice(0, name.lastIndexOf('.'));
    const known = this.byName.get(name);
    if (known && signature(known, namespace) !== signature(node, namespace)) {
      throw new Error(`${name} is defined differently in two schemas`);
    }
    if (!known) this.byName.set(name, node);
  }
}

/** The TypeScript type of a schema node; collects named definitions on the way. */
function tsType(node, namespace, named) {
  if (typeof node === 'string') return PRIMITIVES[node] ?? shortName(fullName(node, namespace));
  if (Array.isArray(node)) return node.map((n) => tsType(n, namespace, named)).join(' | ');
  if (node.type === 'array') {
    const items = tsType(node.items, namespace, named);
    return items.includes('|') ? `(${items})[]` : `${items}[]`;
  }
  if (node.type === 'map') return `Record<string, ${tsType(node.values, namespace, named)}>`;
  if (isNamed(node)) {
    const ns = node.namespace ?? (node.name.includes('.') ? undefined : namespace);
    const name = fullName(node.name, ns);
    named.define(name, node);
    if (node.type === 'record') {
      const inner = ns ?? name.slice(0, name.lastIndexOf('.'));
      for (const field of node.fields) tsType(field.type, inner, named);
    }
    return shortName(name);
  }
  return tsType(node.type, namespace, named); // {"type": "long"}
}

/** `RuleCode` → `RULE_CODE_SYMBOLS`. */
const constName = (name) => `${name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}_SYMBOLS`;

const docComment = (doc, indent = '') => (doc ? `${indent}/** ${doc} */\n` : '');

function declare(node, namespace, named, unionBranches) {
  const name = shortName(node.name);
  if (node.type === 'enum') {
    const symbols = node.symbols.map((s) => `'${s}'`);
    return (
      `${docComment(node.doc)}export type ${name} = ${symbols.join(' | ')};\n` +
      `/** The symbols of ${name}, in schema order. */\n` +
      `export const ${constName(name)}: readonly ${name}[] = [${symbols.join(', ')}];\n`
    );
  }
  if (node.type === 'fixed') return `${docComment(node.doc)}export type ${name} = Buffer;\n`;
  const ns = node.namespace ?? namespace;
  const fields = node.fields.map((field) => {
    // Convention of context-change-event.avsc: a branch's `type` field holds its own name.
    const isTag = unionBranches.has(name) && field.name === 'type' && field.type === 'string';
    const type = isTag ? `'${name}'` : tsType(field.type, ns, named);
    return `${docComment(field.doc, '  ')}  ${field.name}: ${type};\n`;
  });
  return `${docComment(node.doc)}export interface ${name} {\n${fields.join('')}}\n`;
}

const quoted = (names) => names.map((n) => `'${n}'`).join(', ');

/** Does the record with this short name have a field called `field`? */
function hasField(named, short, field) {
  const node = [...named.byName].find(([name]) => shortName(name) === short)?.[1];
  return node?.fields?.some((f) => f.name === field) ?? false;
}

export async function generate(schemaDir = path.join(ROOT, 'schemas')) {
  const named = new NamedTypes();
  const unions = [];
  for (const file of SCHEMA_FILES) {
    const schema = JSON.parse(fs.readFileSync(path.join(schemaDir, file), 'utf8'));
    const branches = tsType(schema, undefined, named);
    if (Array.isArray(schema)) unions.push({ file, branches: branches.split(' | ') });
  }
  const unionBranches = new Set(unions.flatMap((u) => u.branches));
  const shortNames = new Set();
  const parts = [];
  for (const [name, node] of named.byName) {
    if (shortNames.has(shortName(name))) throw new Error(`two types are named ${shortName(name)}`);
    shortNames.add(shortName(name));
    parts.push(declare(node, name.slice(0, name.lastIndexOf('.')), named, unionBranches));
  }
  for (const { file, branches } of unions) {
    parts.push(`/** A value of ${file}: one of its records. */\n`);
    parts.push(`export type ContextChangeEvent = ${branches.join(' | ')};\n`);
    parts.push(`/** The event types of ${file}, in schema order. */\n`);
    parts.push(
      `export const CONTEXT_CHANGE_EVENT_TYPES: readonly ContextChangeEvent['type'][] = [${quoted(branches)}];\n`,
    );
    const signable = branches.filter((b) => hasField(named, b, 'signature'));
    parts.push(
      `/** The records of ${file} with a \`signature\` field: the events a trusted key ring must authorize (contract §4b). */\n`,
    );
    parts.push(`export type SignableEvent = ${signable.join(' | ') || 'never'};\n`);
    parts.push(`/** The signable event types, in schema order. */\n`);
    parts.push(
      `export const SIGNABLE_EVENT_TYPES: readonly SignableEvent['type'][] = [${quoted(signable)}];\n`,
    );
  }
  const header = [
    '// Generated by scripts/gen-types.mjs from schemas/*.avsc. Do not edit by hand:',
    '// change the schema, then run `node scripts/gen-types.mjs`.',
    '// These are the types of decoded values: fields with a default are always present.',
    '// The engine re-exports them (events.ts, outputs.ts): no type of the contract is written twice.',
    '',
  ].join('\n');
  const source = `${header}\n${parts.join('\n')}`;
  const options = (await prettier.resolveConfig(OUT)) ?? {};
  return prettier.format(source, { ...options, parser: 'typescript' });
}

async function main(args) {
  const dirAt = args.indexOf('--schema-dir');
  const output = await generate(dirAt >= 0 ? path.resolve(args[dirAt + 1]) : undefined);
  if (args.includes('--stdout')) {
    process.stdout.write(output);
  } else if (args.includes('--check')) {
    const current = fs.existsSync(OUT) ? fs.readFileSync(OUT, 'utf8') : '';
    if (current !== output) {
      process.stderr.write(
        `${path.relative(ROOT, OUT)} is stale: run node scripts/gen-types.mjs\n`,
      );
      process.exitCode = 1;
    }
  } else {
    fs.writeFileSync(OUT, output);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await main(process.argv.slice(2));
}
