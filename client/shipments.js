#!/usr/bin/env node
// The `shipments` command (package.json bin). Runs client/cli.ts from source through tsx when
// tsx is installed (development), else the compiled dist/client/cli.js (`npm run build`).
'use strict';
const path = require('node:path');

let cli;
try {
  require.resolve('tsx/cjs');
  require('tsx/cjs');
  cli = require('./cli.ts');
} catch (err) {
  if (err && err.code === 'MODULE_NOT_FOUND' && /tsx/.test(String(err.message))) {
    cli = require(path.join(__dirname, '..', 'dist', 'client', 'cli.js'));
  } else {
    throw err;
  }
}
cli.run();
