#!/usr/bin/env node
'use strict';
// Thin launcher: the compiled CLI lives in dist/ (`npm run build`).
require('../dist/cli/main.js').main(process.argv);
