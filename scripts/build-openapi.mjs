// Part of `npm run build`: a JSON copy of the OpenAPI document beside the built loader, so the
// server does not parse YAML at every start. The YAML stays the one source of truth.
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';

const source = new URL('../openapi/plant-store.yaml', import.meta.url);
const target = new URL('../dist/openapi/plant-store.json', import.meta.url);
writeFileSync(target, JSON.stringify(parse(readFileSync(source, 'utf8'))));
