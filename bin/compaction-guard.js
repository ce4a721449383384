#!/usr/bin/env node
'use strict';
// Thin launcher: the compiled CLI lives in dist/ (`npm run build`).
const path = require('node:path');
const { existsSync } = require('node:fs');

const main = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
if (!existsSync(main)) {
  // A fresh clone before its first build: one line saying what to do, not a module stack.
  process.stderr.write(
    'compaction-guard: not built yet (no dist/): run `npm run build` first ' +
      '(`npm start` and `npm test` build too)\n',
  );
  process.exit(2);
}
require(main).main(process.argv);
