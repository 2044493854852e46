// `npm run generate:client`: writes src/client/schema.ts, the TypeScript types of the OpenAPI
// document, with openapi-typescript. test/client/schema.test.ts fails when the file is stale.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import ts from 'typescript';
import { documentPath } from '../src/openapi/document.js';

export const schemaPath = new URL('../src/client/schema.ts', import.meta.url);

// An int64 past 2^53 cannot be a JavaScript number without rounding: the client reads such
// ids as bigint (see src/client/index.ts), and accepts bigint ids in requests.
const INT64 = ts.factory.createUnionTypeNode([
  ts.factory.createKeywordTypeNode(ts.SyntaxKind.NumberKeyword),
  ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword),
]);

export async function renderClientTypes(): Promise<string> {
  const ast = await openapiTS(documentPath, {
    transform: (schema) => (schema.type === 'integer' && schema.format === 'int64' ? INT64 : undefined),
  });
  return COMMENT_HEADER + astToString(ast);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(schemaPath, await renderClientTypes());
  console.log(`wrote ${fileURLToPath(schemaPath)}`);
}
