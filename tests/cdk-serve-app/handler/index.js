// Asset-code function: answers with a value read from a file packaged beside it, so the test
// proves the asset zip was published, fetched and unpacked.
const fs = require('fs');
const path = require('path');

exports.handler = async (event) => {
  const data = JSON.parse(fs.readFileSync(path.join(__dirname, 'data.json'), 'utf8'));
  return { from: 'asset', motto: data.motto, echo: event.echo ?? null };
};
