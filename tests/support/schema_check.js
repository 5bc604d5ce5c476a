// Validates a JSON or YAML file against a JSON schema (draft-07) with Debian's ajv 6 and js-yaml
// (node-ajv, node-js-yaml; NODE_PATH=/usr/share/nodejs). Used by the tests of generated files.
//
//   node schema_check.js SCHEMA FILE      exit 0 valid, 1 invalid (errors on stderr), 2 cannot run
'use strict';
const fs = require('fs');
let Ajv, yaml;
try {
  Ajv = require('ajv');
  yaml = require('js-yaml');
} catch (e) {
  process.stderr.write('schema_check: ' + e.message + ' (install node-ajv and node-js-yaml)\n');
  process.exit(2);
}
const [schemaPath, filePath] = process.argv.slice(2);
if (!schemaPath || !filePath) {
  process.stderr.write('usage: node schema_check.js SCHEMA FILE\n');
  process.exit(2);
}
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const text = fs.readFileSync(filePath, 'utf8');
// YAML 1.2's core schema is a superset of JSON: one parser reads both
const doc = /\.json$/.test(filePath) ? JSON.parse(text) : yaml.load(text, {schema: yaml.CORE_SCHEMA});
const ajv = new Ajv({allErrors: true, unknownFormats: 'ignore', logger: false, schemaId: 'auto', nullable: true});
const validate = ajv.compile(schema);
if (validate(doc)) {
  process.stdout.write(filePath + ': valid against ' + (schema.title || schema.$id || schemaPath) + '\n');
  process.exit(0);
}
for (const e of validate.errors) process.stderr.write(filePath + ': ' + (e.dataPath || '/') + ' ' + e.message + ' ' + JSON.stringify(e.params) + '\n');
process.exit(1);
