import type { ValidateFunction } from 'ajv';
import { plantJson, plantRecord, type PlantRecord } from '../domain/plant.js';
import { readJson, JsonReadError } from '../json/read-json.js';
import type { ApiDocument } from '../openapi/document.js';
import { requestSchema } from '../openapi/request-schema.js';
import { createAjv, validationError } from '../openapi/validation.js';
import type { Store } from '../store/store.js';

const PAGE = 1000;

/** Every plant by id, a page at a time, so memory stays flat however many there are. */
export async function* exportPlants(store: Store): AsyncGenerator<string> {
  let after: bigint | undefined;
  for (;;) {
    const page = await store.listPlants(after, PAGE);
    for (const p of page) yield `${plantJson(p)}\n`;
    if (page.length < PAGE) return;
    after = page.at(-1)!.id;
  }
}

export interface ImportReport {
  created: number;
  skipped: number;
  /** Existing plants with the same id and another name or tag: left as they are. */
  refused: { line: number; id: bigint }[];
  /** Lines that are not a valid NewPlant. */
  invalid: { line: number; message: string }[];
}

/**
 * Reads NDJSON NewPlants and creates them in batches, each batch one transaction. The same
 * rules as POST /plants apply, so an import is idempotent: an identical plant is skipped and a
 * conflicting one is reported and left alone, and the rest still goes in.
 */
export async function importPlants(
  store: Store,
  doc: ApiDocument,
  lines: AsyncIterable<string> | Iterable<string>,
): Promise<ImportReport> {
  const validate = newPlantValidator(doc);
  const report: ImportReport = { created: 0, skipped: 0, refused: [], invalid: [] };
  let batch: { line: number; plant: PlantRecord }[] = [];
  const flush = async () => {
    const outcomes = await store.writePlants(batch.map((b) => ({ kind: 'create', plant: b.plant })));
    outcomes.forEach((o, i) => {
      if (o.kind === 'created') report.created++;
      else if (o.kind === 'unchanged') report.skipped++;
      else report.refused.push({ line: batch[i]!.line, id: batch[i]!.plant.id });
    });
    batch = [];
  };
  let n = 0;
  for await (const text of lines) {
    n++;
    if (text.trim() === '') continue;
    const parsed = parseLine(text, validate);
    if ('message' in parsed) report.invalid.push({ line: n, message: parsed.message });
    else batch.push({ line: n, plant: parsed });
    if (batch.length >= PAGE) await flush();
  }
  if (batch.length) await flush();
  return report;
}

function newPlantValidator(doc: ApiDocument): ValidateFunction {
  const schema = doc.operations.get('addPlant')?.requestBody;
  if (!schema) throw new Error('the OpenAPI document has no NewPlant request body');
  return createAjv().compile(requestSchema(schema) as object);
}

function parseLine(text: string, validate: ValidateFunction): PlantRecord | { message: string } {
  let value: unknown;
  try {
    value = readJson(text);
  } catch (err) {
    if (err instanceof JsonReadError) return { message: err.message };
    throw err;
  }
  if (!validate(value)) return { message: validationError(validate.errors ?? [], 'line').message };
  const v = value as { id: number | bigint; name: string; tag?: string };
  return plantRecord(BigInt(v.id), v.name, v.tag);
}
