// An import's batches: the lines of a file as plants (NewPlant, read exactly: ids past 2^53
// stay bigints), 1,000 at a time, the most POST /plants/batch takes.
import type { NewPlant } from '../../../src/client/index.js';
import { readJson } from '../../../src/json/read-json.js';
import type { FileLine } from './lines.js';

export const BATCH = 1000;

export interface Item {
  line: number;
  plant: NewPlant;
}

export type Problem = { line: number; message: string };

/** A line's plant, or what is wrong with it (the API checks the rest). */
export function plantOf(line: FileLine): NewPlant | string {
  let value: unknown;
  try {
    value = readJson(line.bytes);
  } catch (err) {
    return (err as Error).message;
  }
  const p = value as Partial<NewPlant> | null;
  const integer = typeof p?.id === 'bigint' || Number.isInteger(p?.id);
  if (typeof p !== 'object' || p === null || Array.isArray(p) || !integer || typeof p.name !== 'string')
    return 'not a plant: an object with an integer id and a name is expected';
  return p as NewPlant;
}

/**
 * The file's plants in batches, each with how far into the file it reaches; a blank line is
 * skipped, a line that is no plant is a problem. The last batch may be empty.
 */
export async function* batchesOf(
  lines: AsyncIterable<FileLine>,
  problem: (p: Problem) => void,
): AsyncGenerator<{ items: Item[]; through: number }> {
  let batch: Item[] = [];
  let through = 0;
  for await (const line of lines) {
    through = line.through;
    // JSON's white space only (a CR was the line's ending).
    if (line.bytes.every((b) => b === 0x20 || b === 0x09 || b === 0x0d)) continue;
    const plant = plantOf(line);
    if (typeof plant === 'string') problem({ line: line.number, message: plant });
    else batch.push({ line: line.number, plant });
    if (batch.length === BATCH) {
      yield { items: batch, through };
      batch = [];
    }
  }
  yield { items: batch, through };
}
