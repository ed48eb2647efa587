#!/usr/bin/env node
// Fills in what jsonata-js answers for each case of a JSONata conformance table (the Rust
// tests hold cumulo's evaluator to it): `result`, `undefined: true` or `error: <code>`.
// Usage: npm install jsonata (in a directory outside the repository), then
//   NODE_PATH=<that directory>/node_modules node scripts/jsonata-js-table.js <table.json>
const fs = require('fs');
const jsonata = require('jsonata');

(async () => {
  const file = process.argv[2];
  const table = JSON.parse(fs.readFileSync(file, 'utf8'));
  table.jsonata = require('jsonata/package.json').version;
  for (const c of table.cases) {
    delete c.result; delete c.undefined; delete c.error;
    try {
      const input = c.input === undefined ? undefined : table.inputs[c.input];
      const r = await jsonata(c.expr).evaluate(input);
      if (r === undefined) c.undefined = true; else c.result = JSON.parse(JSON.stringify(r));
    } catch (e) {
      c.error = e.code;
    }
  }
  fs.writeFileSync(file, JSON.stringify(table, null, 1) + '\n');
})();
