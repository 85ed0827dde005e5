#!/usr/bin/env node
'use strict';
const path = require('node:path');
const fs = require('node:fs');

const entry = path.join(__dirname, '..', 'dist', 'main.js');
if (!fs.existsSync(entry)) {
  process.stderr.write(
    'relaygram: not built yet; run `npm run build` in the Relaygram checkout first\n',
  );
  process.exit(1);
}
require(entry);
