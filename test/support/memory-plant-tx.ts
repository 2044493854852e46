import type { PlantRecord } from '../../src/domain/plant.js';
import type { NewEvent } from '../../src/domain/webhook.js';
import type { Current, PlantTx } from '../../src/store/write-path.js';

const same = (a: PlantRecord | undefined, b: PlantRecord) => a?.name === b.name && a.tag === b.tag && a.id === b.id;

interface Rival {
  plant: PlantRecord;
  /** How many more of this store's creations of the id it takes first. */
  wins: number;
  /** It deletes its plant again before this store's next read (created and deleted again and again). */
  deletes: boolean;
  holds: boolean;
}

/**
 * A `PlantTx` over a Map, for the write path's tests: it keeps what the SQLite and PostgreSQL ones
 * promise (store/write-path.ts), throws when the write path breaks its side (ids read twice in one
 * step, a change of a plant that is not stored as decided), and lets a test put another
 * instance's creation between a read and its insert. On PostgreSQL that takes two instances and
 * luck: an id that does not exist yet cannot be locked, so another transaction may insert it first.
 */
export class MemoryPlantTx implements PlantTx {
  readonly plants = new Map<bigint, PlantRecord>();
  /** Every call, in order: `read 1,2`, `update 3`, `delete 4`, `log plant.created 5`. */
  readonly calls: string[] = [];
  readonly events: NewEvent[] = [];
  /** The change log's last position. */
  position = 100n;
  private readonly rivals = new Map<bigint, Rival>();

  constructor(plants: PlantRecord[] = []) {
    for (const p of plants) this.plants.set(p.id, p);
  }

  /** Another instance creates `plant` just before this store inserts its id, `wins` times. */
  rival(plant: PlantRecord, { wins = 1, deletes = false } = {}): void {
    this.rivals.set(plant.id, { plant, wins, deletes, holds: false });
  }

  async read(ids: bigint[], creations: PlantRecord[]): Promise<Current> {
    this.calls.push(`read ${ids.join(',')}`);
    if (new Set(ids).size !== ids.length) throw new Error(`one id twice in one read: ${ids.join(',')}`);
    for (const [id, r] of this.rivals) {
      if (r.holds && r.deletes) {
        this.plants.delete(id);
        r.holds = false;
      }
    }
    const plants = new Map<bigint, PlantRecord>();
    for (const id of ids) {
      const p = this.plants.get(id);
      if (p) plants.set(id, p);
    }
    return { plants, inserted: this.insertFree(creations), position: this.position };
  }

  async insert(plants: PlantRecord[]): Promise<Set<bigint>> {
    return this.insertFree(plants);
  }

  async update(updates: { plant: PlantRecord; before: PlantRecord }[]): Promise<void> {
    this.calls.push(`update ${updates.map((u) => u.plant.id).join(',')}`);
    for (const { plant, before } of updates) {
      if (!same(this.plants.get(plant.id), before)) throw new Error(`plant ${plant.id} is not stored as decided`);
      this.plants.set(plant.id, plant);
    }
  }

  async delete(plants: PlantRecord[]): Promise<void> {
    this.calls.push(`delete ${plants.map((p) => p.id).join(',')}`);
    for (const p of plants) {
      if (!same(this.plants.get(p.id), p)) throw new Error(`plant ${p.id} is not stored as decided`);
      this.plants.delete(p.id);
    }
  }

  async log(events: NewEvent[]): Promise<bigint[]> {
    for (const e of events) this.calls.push(`log ${e.type} ${e.plantId}`);
    this.events.push(...events);
    return events.map(() => ++this.position);
  }

  private insertFree(creations: PlantRecord[]): Set<bigint> {
    const inserted = new Set<bigint>();
    for (const p of creations) {
      const r = this.rivals.get(p.id);
      if (r && r.wins > 0 && !this.plants.has(p.id)) {
        r.wins--;
        r.holds = true;
        this.plants.set(p.id, r.plant);
      }
      if (this.plants.has(p.id)) continue;
      this.plants.set(p.id, p);
      inserted.add(p.id);
    }
    return inserted;
  }
}
