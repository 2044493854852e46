import type { PlantRecord } from '../../domain/plant.js';

/** Every integer is read as a bigint (connection.ts): ids never pass through a float. */
export interface PlantRow {
  id: bigint;
  name: string;
  tag: string | null;
}

export function plantFromRow(row: PlantRow): PlantRecord {
  return row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag };
}
