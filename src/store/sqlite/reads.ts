import type Database from 'better-sqlite3';
import type { PlantRecord } from '../../domain/plant.js';
import type { PlantListQuery } from '../../domain/plant-query.js';
import { plantFromRow, type PlantRow } from './connection.js';
import { sqliteFilters } from './plant-filters.js';

const n = (v: bigint | undefined) => Number(v ?? 0);

/** The store's reads, on the read connection: WAL lets them run while a write is under way. */
export function sqliteReads(db: Database.Database) {
  const s = {
    getPlant: db.prepare<[bigint], PlantRow>('SELECT id, name, tag FROM plants WHERE id = ?'),
    listFirst: db.prepare<[number], PlantRow>('SELECT id, name, tag FROM plants ORDER BY id LIMIT ?'),
    listAfter: db.prepare<[bigint, number], PlantRow>(
      'SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ?',
    ),
    countPlants: db.prepare<[], { n: bigint }>('SELECT count(*) AS n FROM plants'),
  };
  const filters = sqliteFilters(db);

  return {
    getPlant(id: bigint): PlantRecord | undefined {
      const row = s.getPlant.get(id);
      return row && plantFromRow(row);
    },
    listPlants(query: PlantListQuery, limit: number): PlantRecord[] {
      const { after } = query;
      return (
        filters.listPlants(query, limit) ??
        (after === undefined ? s.listFirst.all(limit) : s.listAfter.all(after, limit)).map(plantFromRow)
      );
    },
    countPlants: () => n(s.countPlants.get()?.n),
  };
}
