import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const KAFKAJS = {
  regex: '^kafkajs(/|$)',
  message: 'import kafkajs through the boundary, src/kafka/kafkajs (index.ts), not directly.',
};
const PLATFORMATIC = {
  regex: '^@platformatic/kafka(/|$)',
  message:
    '@platformatic/kafka is imported only under src/kafka/platformatic (the transport on it).',
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.cache/**', 'bin/**', '*.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // The client probes (bench/probes/): plain Node scripts, run with the repository's Node.
    files: ['bench/probes/**/*.mjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
  },
  {
    // jest's CommonJS transformers (test/support/*.cjs).
    files: ['test/support/**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The client boundaries: the rest of src/ reaches kafkajs only through src/kafka/kafkajs
    // (index.ts), and @platformatic/kafka only from src/kafka/platformatic, so that each
    // client's workarounds stay in one place behind the transport (docs/decisions.md 205-207).
    // One rule per set of files: a later block's no-restricted-imports replaces an earlier one's.
    files: ['src/**/*.ts'],
    ignores: ['src/kafka/kafkajs/**', 'src/kafka/platformatic/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [KAFKAJS, PLATFORMATIC] }] },
  },
  {
    files: ['src/kafka/kafkajs/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [PLATFORMATIC] }] },
  },
  {
    files: ['src/kafka/platformatic/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [KAFKAJS] }] },
  },
  {
    // The client is the layer the integrations build on: it imports nothing of theirs, so
    // `compaction-guard/client` never loads an integration (docs/decisions.md 200).
    files: ['src/client/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)integrations(/|$)',
              message:
                'src/client must not depend on src/integrations: move what both need into the client or a lower module.',
            },
            KAFKAJS,
            PLATFORMATIC,
          ],
        },
      ],
    },
  },
  {
    // The functional core: pure, deterministic, no I/O. It imports only its own modules and
    // avsc (an encoder, for the changelog's state format); Kafka, the registry, metrics, HTTP,
    // the file system and the clock belong to the shell around it.
    files: ['src/engine/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./|avsc$)',
              message:
                'src/engine is the pure core: import only ./ modules (and avsc); I/O belongs to the shell.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'src/engine is pure: configuration is passed in.' },
        { name: 'fetch', message: 'src/engine does no I/O.' },
        { name: 'setTimeout', message: 'src/engine is synchronous and deterministic.' },
        { name: 'setInterval', message: 'src/engine is synchronous and deterministic.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'src/engine takes the clock as an argument.' },
        { object: 'Math', property: 'random', message: 'src/engine is deterministic.' },
        { object: 'performance', property: 'now', message: 'src/engine takes no time.' },
      ],
    },
  },
);
