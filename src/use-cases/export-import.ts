import { plantJson, plantRecord, type PlantRecord } from '../domain/plant.js';
import { readLines, type NdjsonLine } from '../json/ndjson.js';
import type { ApiDocument } from '../openapi/document.js';
import { newPlantCheck, type PlantCheck } from '../openapi/plant-check.js';
import type { Store } from '../store/store.js';

const PAGE = 1000;

/** Every plant by id, a page at a time, so memory stays flat however many there are. */
export async function* exportPlants(store: Pick<Store, 'plants'>): AsyncGenerator<string> {
  let after: bigint | undefined;
  for (;;) {
    const page = await store.plants.list({ after }, PAGE);
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

export interface ImportOptions {
  /** The API's body limit: a longer line is refused as a body of that size would be (413). */
  maxLineBytes?: number;
}

/**
 * Reads NDJSON NewPlants (lines read by json/ndjson.ts) and creates them in batches, each batch
 * one transaction. The same rules as POST /plants apply, bytes included: each line's bytes go to
 * the same JSON reader as a request body (invalid UTF-8, lone surrogates and noncharacters are
 * refused, never replaced), then to the same schema. Blank lines are skipped. An import is
 * idempotent: an identical plant is skipped and a conflicting one is reported and left alone,
 * and the rest, invalid lines included, still goes in.
 */
export async function importPlants(
  store: Pick<Store, 'plants'>,
  doc: ApiDocument,
  lines: AsyncIterable<NdjsonLine> | Iterable<NdjsonLine>,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const check = await newPlantCheck(doc, 'line');
  const report: ImportReport = { created: 0, skipped: 0, refused: [], invalid: [] };
  let batch: { line: number; plant: PlantRecord }[] = [];
  const flush = async () => {
    const outcomes = await store.plants.writeAll(batch.map((b) => ({ kind: 'create', plant: b.plant })));
    outcomes.forEach((o, i) => {
      if (o.kind === 'created') report.created++;
      else if (o.kind === 'unchanged') report.skipped++;
      else report.refused.push({ line: batch[i]!.line, id: batch[i]!.plant.id });
    });
    batch = [];
  };
  for await (const line of readLines(lines, options.maxLineBytes)) {
    if (line.kind === 'blank') continue;
    const parsed = line.kind === 'value' ? parsePlant(line.value, check) : { message: line.message };
    if ('message' in parsed) report.invalid.push({ line: line.number, message: parsed.message });
    else batch.push({ line: line.number, plant: parsed });
    if (batch.length >= PAGE) await flush();
  }
  if (batch.length) await flush();
  if (report.created > 0) await store.plants.settleAfterImport();
  return report;
}

/** The report's problems, refused and invalid lines together, in line order. */
export function importProblems(report: ImportReport): { line: number; message: string }[] {
  return [
    ...report.invalid,
    ...report.refused.map((r) => ({
      line: r.line,
      message: `plant ${r.id} already exists with a different name or tag; left as it is`,
    })),
  ].sort((a, b) => a.line - b.line);
}

function parsePlant(value: unknown, check: PlantCheck): PlantRecord | { message: string } {
  const problem = check(value);
  if (problem !== undefined) return { message: problem };
  const v = value as { id: number | bigint; name: string; tag?: string };
  return plantRecord(BigInt(v.id), v.name, v.tag);
}
