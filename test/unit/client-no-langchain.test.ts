/**
 * Each entry point loads only its own optional peers: `compaction-guard/client` neither
 * langchain / @langchain/core nor the AI SDK (`ai`), `compaction-guard/ai-sdk` no langchain,
 * `compaction-guard/langchain` no `ai`. (test/integration/packed-install.test.ts proves the same
 * on the packed package installed without them.)
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { relativeImports } from '../support/sourceImports';

const SRC = path.resolve(__dirname, '../../src');

/** Every src file reachable from `entry` through relative imports. */
function reachable(entry: string, seen = new Set<string>()): Set<string> {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  for (const file of relativeImports(entry)) reachable(file, seen);
  return seen;
}

it('nothing the client entry point loads imports langchain or @langchain/*', () => {
  const files = [...reachable(path.join(SRC, 'client/index.ts'))];
  expect(files.length).toBeGreaterThan(5);
  const offenders = files.filter((f) =>
    /from '(langchain|@langchain\/)/.test(readFileSync(f, 'utf8')),
  );
  expect(offenders).toEqual([]);
  // The check sees the integration's imports when pointed at it.
  const lc = [...reachable(path.join(SRC, 'integrations/langchain/index.ts'))];
  expect(lc.some((f) => /from 'langchain'/.test(readFileSync(f, 'utf8')))).toBe(true);
});

const importsOf = (entry: string, peer: RegExp) =>
  [...reachable(path.join(SRC, entry))].filter((f) => peer.test(readFileSync(f, 'utf8')));
const LANGCHAIN = /from '(langchain|@langchain\/)/;
const AI_SDK = /from '(ai|ai\/[^']+|@ai-sdk\/[^']+)'/;

it('the client entry point imports no AI SDK; the AI SDK entry no langchain, the langchain entry no AI SDK', () => {
  expect(importsOf('client/index.ts', AI_SDK)).toEqual([]);
  expect(importsOf('integrations/ai-sdk/index.ts', LANGCHAIN)).toEqual([]);
  expect(importsOf('integrations/langchain/index.ts', AI_SDK)).toEqual([]);
  // The checks see the integrations' own imports when pointed at them.
  expect(importsOf('integrations/ai-sdk/index.ts', AI_SDK).length).toBeGreaterThan(0);
  expect(importsOf('integrations/langchain/index.ts', LANGCHAIN).length).toBeGreaterThan(0);
});

it('the Claude Code and Agent SDK entry points load no framework, and the Agent SDK only as types', () => {
  const CLAUDE_SDK = /from '@anthropic-ai\/claude-agent-sdk'/;
  const VALUE_IMPORT = /^import (?!type )[^;]*from '@anthropic-ai\/claude-agent-sdk'/m;
  for (const entry of [
    'integrations/claude-code/index.ts',
    'integrations/claude-agent-sdk/index.ts',
  ]) {
    expect(importsOf(entry, LANGCHAIN)).toEqual([]);
    expect(importsOf(entry, AI_SDK)).toEqual([]);
    expect(importsOf(entry, VALUE_IMPORT)).toEqual([]);
  }
  expect(importsOf('integrations/claude-code/index.ts', CLAUDE_SDK)).toEqual([]);
  // The check sees the SDK's type import when pointed at the Agent SDK entry.
  expect(importsOf('integrations/claude-agent-sdk/index.ts', CLAUDE_SDK).length).toBe(1);
});
