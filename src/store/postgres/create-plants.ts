import type { CreateOutcome, PlantRecord } from '../../domain/plant.js';
import { plantFromRow, SQL, type PlantRow, type Run } from './rows.js';

/**
 * Creates the plants whose ids are free and reports on the others, in the order given, with
 * the embedded store's outcomes (a later duplicate in one batch compares with the first).
 *
 * INSERT … ON CONFLICT DO NOTHING, then the rows that were already there are read and
 * compared. A concurrent insert of the same id, from any instance, makes ours wait for its
 * commit and then do nothing, so an id is created once. A row deleted between the two
 * statements is inserted again, a bounded number of times.
 */
export async function createPlantsOnce(plants: PlantRecord[], run: Run): Promise<CreateOutcome[]> {
  const first = new Map<bigint, PlantRecord>();
  for (const p of plants) if (!first.has(p.id)) first.set(p.id, p);
  const created = new Set<bigint>();
  const stored = new Map<bigint, PlantRecord>();
  let pending = [...first.values()];
  for (let attempt = 1; pending.length > 0; attempt++) {
    if (attempt > 3) throw new Error('plants were deleted again and again while being created');
    const values = [pending.map((p) => String(p.id)), pending.map((p) => p.name), pending.map((p) => p.tag ?? null)];
    for (const row of await run<{ id: string }>({ ...SQL.insertPlants, values })) {
      const id = BigInt(row.id);
      created.add(id);
      stored.set(id, first.get(id)!);
    }
    const existing = pending.filter((p) => !created.has(p.id));
    if (existing.length === 0) break;
    const ids = existing.map((p) => String(p.id));
    for (const row of await run<PlantRow>({ ...SQL.plantsById, values: [ids] })) {
      const p = plantFromRow(row);
      stored.set(p.id, p);
    }
    pending = existing.filter((p) => !stored.has(p.id));
  }
  const claimed = new Set<bigint>();
  return plants.map((p): CreateOutcome => {
    if (created.has(p.id) && !claimed.has(p.id)) {
      claimed.add(p.id);
      return { kind: 'created' };
    }
    const existing = stored.get(p.id)!;
    return existing.name === p.name && existing.tag === p.tag ? { kind: 'identical' } : { kind: 'conflict', existing };
  });
}
