/** `npm run schema`: writes the printed GraphQL schema (schema.graphql) that the drift test compares with the code. */
import { writeFileSync } from 'node:fs';
import { printSchemaFile, SCHEMA_FILE } from '../graphql/print-schema.js';

writeFileSync(SCHEMA_FILE, printSchemaFile());
console.log(`wrote ${SCHEMA_FILE.pathname}`);
