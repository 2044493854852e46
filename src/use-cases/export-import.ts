import { plantJson, plantRecord, type PlantRecord } from '../domain/plant.js';
import { readJson, JsonReadError } from '../json/read-json.js';
import type { ApiDocument } from '../openapi/document.js';
import { newPlantCheck, type PlantCheck } from '../openapi/plant-check.js';
import type { Store } from '../store/store.js';

const PAGE = 1000;

/** Every plant by id, a page at a time, so memory stays flat however many there are. */
export async function* exportPlants(store: Store): AsyncGenerator<string> {
  let after: bigint | undefined;
  for (;;) {
    const page = await store.listPlants({ after }, PAGE);
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

/** A line longer than the limit: its bytes (a final \r included) were counted and dropped, never kept. */
export interface LineTooLong {
  tooLong: number;
}

/** One line of the input: its bytes (or, from tests and callers that have it, its text). */
export type ImportLine = Uint8Array | string | LineTooLong;

const NEWLINE = 0x0a;
const CR = 0x0d;

/**
 * Splits a byte stream into lines on \n, streaming: only the current line is held, and not even
 * that once it passes `maxBytes` (it is then reported as too long). One \r before the \n is
 * dropped, so CRLF files read like LF files. The bytes of each line are left undecoded: the
 * JSON reader decides whether they are UTF-8, as it does for a request body. A last line
 * without \n counts; the empty string after a final \n does not.
 */
export async function* splitLines(input: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<ImportLine> {
  let parts: Uint8Array[] = [];
  let size = 0;
  const finish = (): ImportLine => {
    const line = size > maxBytes + 1 ? undefined : Buffer.concat(parts, size);
    parts = [];
    const seen = size;
    size = 0;
    if (line === undefined) return { tooLong: seen };
    const body = line.length > 0 && line[line.length - 1] === CR ? line.subarray(0, line.length - 1) : line;
    return body.length > maxBytes ? { tooLong: body.length } : body;
  };
  for await (const chunk of input) {
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(NEWLINE, start);
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      size += piece.length;
      // Room for one \r past the limit; beyond that the line is only counted.
      if (size <= maxBytes + 1) parts.push(piece);
      else parts = [];
      if (end === -1) break;
      yield finish();
      start = end + 1;
    }
  }
  if (size > 0) yield finish();
}

/** JSON's whitespace only (a line of it is skipped, as blank). */
function isBlank(line: Uint8Array | string): boolean {
  if (typeof line === 'string') return /^[ \t\r\n]*$/.test(line);
  return line.every((b) => b === 0x20 || b === 0x09 || b === CR || b === NEWLINE);
}

export interface ImportOptions {
  /** The API's body limit: a longer line is refused as a body of that size would be (413). */
  maxLineBytes?: number;
}

/**
 * Reads NDJSON NewPlants and creates them in batches, each batch one transaction. The same
 * rules as POST /plants apply, bytes included: each line's bytes go to the same JSON reader
 * as a request body (invalid UTF-8, lone surrogates and noncharacters are refused, never
 * replaced), then to the same schema. An import is idempotent: an identical plant is skipped
 * and a conflicting one is reported and left alone, and the rest still goes in.
 */
export async function importPlants(
  store: Store,
  doc: ApiDocument,
  lines: AsyncIterable<ImportLine> | Iterable<ImportLine>,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const check = await newPlantCheck(doc, 'line');
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
  const tooLong = `line is larger than the limit${options.maxLineBytes === undefined ? '' : ` of ${options.maxLineBytes} bytes`}`;
  let n = 0;
  for await (const line of lines) {
    n++;
    if (
      (typeof line === 'object' && 'tooLong' in line) ||
      (options.maxLineBytes !== undefined && lineBytes(line) > options.maxLineBytes)
    ) {
      report.invalid.push({ line: n, message: tooLong });
      continue;
    }
    if (isBlank(line)) continue;
    const parsed = parseLine(line, check);
    if ('message' in parsed) report.invalid.push({ line: n, message: parsed.message });
    else batch.push({ line: n, plant: parsed });
    if (batch.length >= PAGE) await flush();
  }
  if (batch.length) await flush();
  if (report.created > 0) await store.settleAfterImport();
  return report;
}

function lineBytes(line: Uint8Array | string): number {
  return typeof line === 'string' ? Buffer.byteLength(line) : line.length;
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

function parseLine(line: Uint8Array | string, check: PlantCheck): PlantRecord | { message: string } {
  let value: unknown;
  try {
    value = readJson(line);
  } catch (err) {
    if (err instanceof JsonReadError) return { message: err.message };
    throw err;
  }
  const problem = check(value);
  if (problem !== undefined) return { message: problem };
  const v = value as { id: number | bigint; name: string; tag?: string };
  return plantRecord(BigInt(v.id), v.name, v.tag);
}
