import type Database from 'better-sqlite3';
import type { TokenRecord } from '../../domain/token.js';
import type { PlantTx } from '../write-path.js';
import { sqliteFilterUpkeep } from './migrations.js';
import { sqlitePlantTx } from './plant-tx.js';
import { webhookWrites } from './webhook-writes.js';

/** The store's writes, on the write connection; the writer runs each inside its transaction. */
export function sqliteWrites(db: Database.Database) {
  const s = {
    insertToken: db.prepare(
      'INSERT INTO tokens (id, name, hash, prefix, scopes, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    revokeToken: db.prepare('UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?'),
    totalChanges: db.prepare<[], number>('SELECT total_changes()').pluck(),
    mergeSearchIndex: db.prepare(sqliteFilterUpkeep.ftsMergeStep),
  };
  const webhooks = webhookWrites(db);
  const plants: PlantTx = sqlitePlantTx(db, webhooks.emit);
  return {
    plants,
    webhooks,
    insertToken(t: TokenRecord): void {
      const ms = (d: Date | null) => d?.getTime() ?? null;
      s.insertToken.run(
        t.id,
        t.name,
        t.hash,
        t.prefix,
        t.scopes.join(' '),
        t.createdAt.getTime(),
        ms(t.expiresAt),
        ms(t.revokedAt),
      );
    },
    revokeToken: (id: string, at: Date): boolean => s.revokeToken.run(at.getTime(), id).changes === 1,
    /** One step of merging the search index; false when it found nothing left to merge. */
    mergeSearchIndexStep(): boolean {
      const before = s.totalChanges.get()!;
      s.mergeSearchIndex.run();
      return s.totalChanges.get()! - before > 1;
    },
  };
}
