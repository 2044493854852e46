import type Database from 'better-sqlite3';
import type { CreateOutcome, PlantRecord } from '../../domain/plant.js';
import type { TokenRecord } from '../../domain/token.js';
import type { AttemptResult, DueDelivery, WebhookEndpoint } from '../../domain/webhook.js';
import { PLANT_BY_ID, plantFromRow, type PlantRow } from './connection.js';
import { webhookWrites } from './webhook-writes.js';

/** Every change the store makes, as a message the writer thread can apply. */
export type WriteOp =
  | { kind: 'createPlant'; plant: PlantRecord }
  | { kind: 'createPlants'; plants: PlantRecord[] }
  | { kind: 'replacePlant'; plant: PlantRecord }
  | { kind: 'deletePlant'; id: bigint }
  | { kind: 'insertToken'; token: TokenRecord }
  | { kind: 'revokeToken'; id: string; at: Date }
  | { kind: 'insertEndpoint'; endpoint: WebhookEndpoint }
  | { kind: 'removeEndpoint'; id: string }
  | { kind: 'claimDeliveries'; now: number; leaseUntil: number; limit: number }
  | { kind: 'recordAttempt'; result: AttemptResult }
  | { kind: 'pruneEvents'; before: number };

export type WriteResult = CreateOutcome | CreateOutcome[] | boolean | PlantRecord | DueDelivery[] | number | undefined;

/** Prepares the write statements on a connection and returns the function that applies one op. */
export function writeOps(db: Database.Database): (op: WriteOp) => WriteResult {
  const s = {
    insertPlant: db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
    getPlant: db.prepare<[bigint], PlantRow>(PLANT_BY_ID),
    replacePlant: db.prepare('UPDATE plants SET name = ?, tag = ? WHERE id = ?'),
    deletePlant: db.prepare<[bigint], PlantRow>('DELETE FROM plants WHERE id = ? RETURNING id, name, tag'),
    insertToken: db.prepare(
      'INSERT INTO tokens (id, name, hash, prefix, scopes, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    revokeToken: db.prepare('UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?'),
  };

  const events = webhookWrites(db);

  // Only a real change emits an event: an identical retry or a conflict leaves the outbox alone.
  const createPlant = (plant: PlantRecord): CreateOutcome => {
    if (s.insertPlant.run(plant.id, plant.name, plant.tag ?? null).changes === 1) {
      events.emit('plant.created', plant);
      return { kind: 'created' };
    }
    const existing = plantFromRow(s.getPlant.get(plant.id)!);
    return existing.name === plant.name && existing.tag === plant.tag
      ? { kind: 'identical' }
      : { kind: 'conflict', existing };
  };

  return (op) => {
    switch (op.kind) {
      case 'createPlant':
        return createPlant(op.plant);
      case 'createPlants':
        return op.plants.map(createPlant);
      case 'replacePlant': {
        const replaced = s.replacePlant.run(op.plant.name, op.plant.tag ?? null, op.plant.id).changes === 1;
        if (replaced) events.emit('plant.updated', op.plant);
        return replaced;
      }
      case 'deletePlant': {
        const row = s.deletePlant.get(op.id);
        const deleted = row && plantFromRow(row);
        if (deleted) events.emit('plant.deleted', deleted);
        return deleted;
      }
      case 'insertToken': {
        const t = op.token;
        s.insertToken.run(
          t.id,
          t.name,
          t.hash,
          t.prefix,
          t.scopes.join(' '),
          t.createdAt.getTime(),
          t.expiresAt?.getTime() ?? null,
          t.revokedAt?.getTime() ?? null,
        );
        return undefined;
      }
      case 'revokeToken':
        return s.revokeToken.run(op.at.getTime(), op.id).changes === 1;
      case 'insertEndpoint':
        events.insertEndpoint(op.endpoint);
        return undefined;
      case 'removeEndpoint':
        return events.removeEndpoint(op.id);
      case 'claimDeliveries':
        return events.claim(op.now, op.leaseUntil, op.limit);
      case 'recordAttempt':
        events.record(op.result);
        return undefined;
      case 'pruneEvents':
        return events.prune(op.before);
    }
  };
}
