// Every Cypher query medkg's neo4j backend sends, checked by Neo4j's own parser
// and semantic analysis (@neo4j-cypher/language-support, the one behind Neo4j's
// editor tooling). Reads a JSON list of queries; prints one JSON object:
// {"checked": n, "errors": [[query, [messages]]...], "warnings": {message: count}}.
// Undeclared parameters are not errors here: the Python test checks them.
// Run from the directory whose node_modules holds the package.
import fs from 'fs';
import { createRequire } from 'module';

const ls = createRequire(`${process.cwd()}/`)('@neo4j-cypher/language-support');

const queries = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const errors = [];
const warnings = {};
for (const query of queries) {
  const found = ls.lintCypherQuery(query, {}).diagnostics;
  const bad = found.filter((d) => d.severity === 1 && !/^Parameter \$\w+ is not defined\.$/.test(d.message));
  if (bad.length) errors.push([query, bad.map((d) => d.message)]);
  for (const d of found.filter((d) => d.severity !== 1)) warnings[d.message] = (warnings[d.message] || 0) + 1;
}
console.log(JSON.stringify({ checked: queries.length, errors, warnings }));
