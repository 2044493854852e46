import { createHash } from 'node:crypto';
import { plantJson } from '../domain/plant.js';
import type { TokenRecord } from '../domain/token.js';
import type { WebhookEndpoint } from '../domain/webhook.js';
import { writeJson } from '../json/write-json.js';
import type { StoreKind } from '../store/schema-versions.js';
import type { Store } from '../store/store.js';

// The whole-store backup file (README, "Backup and restore"): NDJSON, one typed record a line.
//
//   {"format":"plant-store-backup","version":1,"plantStore":"0.2.0","store":"sqlite","schema":2,"takenAt":"…"}
//   {"type":"token","id":…,"name":…,"hash":…,"prefix":…,"scopes":[…],"createdAt":…,"expiresAt":…,"revokedAt":…}
//   {"type":"webhook","id":…,"url":…,"events":[…],"secret":…,"enabled":…,"disabledReason":…,"createdAt":…}
//   {"type":"plant","id":9223372036854775807,"name":…,"tag":…}          by id ascending, ids exact
//   {"type":"end","plants":N,"tokens":N,"webhooks":N,"sha256":"<hex of every byte before this line>"}

export const BACKUP_FORMAT = 'plant-store-backup';
/** The version of the layout above; a restore refuses any other. */
export const BACKUP_FORMAT_VERSION = 1;

export interface BackupHeader {
  format: typeof BACKUP_FORMAT;
  version: number;
  /** The plant-store version that wrote it. */
  plantStore: string;
  /** The kind of store it was taken from, and that store's schema version. */
  store: StoreKind;
  schema: number;
  /** When the snapshot was taken (ISO 8601, UTC). */
  takenAt: string;
}

export interface BackupCounts {
  plants: number;
  tokens: number;
  webhooks: number;
}

const PAGE = 5000;

export function tokenLine(t: TokenRecord): string {
  return writeJson({
    type: 'token',
    id: t.id,
    name: t.name,
    hash: t.hash,
    prefix: t.prefix,
    scopes: t.scopes,
    createdAt: t.createdAt.toISOString(),
    expiresAt: t.expiresAt?.toISOString() ?? null,
    revokedAt: t.revokedAt?.toISOString() ?? null,
  });
}

export function webhookLine(e: WebhookEndpoint): string {
  return writeJson({
    type: 'webhook',
    id: e.id,
    url: e.url,
    events: e.events,
    secret: e.secret,
    enabled: e.enabled,
    disabledReason: e.disabledReason,
    createdAt: e.createdAt.toISOString(),
  });
}

/**
 * The whole store, as of one moment, as the lines of a backup file. The store is read in one
 * snapshot (store.openSnapshot) that the server's writes, in this process or another, do not
 * disturb; plants a page at a time, so memory stays flat whatever the store holds. The outbox of
 * webhook deliveries is not part of it. Each chunk ends with a newline.
 */
export async function* backupStore(
  store: Store,
  plantStoreVersion: string,
): AsyncGenerator<string, BackupCounts & { header: BackupHeader }> {
  const snapshot = await store.openSnapshot();
  try {
    const header: BackupHeader = {
      format: BACKUP_FORMAT,
      version: BACKUP_FORMAT_VERSION,
      plantStore: plantStoreVersion,
      store: store.kind,
      schema: snapshot.schemaVersion,
      takenAt: new Date().toISOString(),
    };
    const hash = createHash('sha256');
    const counts: BackupCounts = { plants: 0, tokens: 0, webhooks: 0 };
    const hashed = (text: string) => {
      hash.update(text, 'utf8');
      return text;
    };
    yield hashed(`${writeJson(header)}\n`);
    for (const t of await snapshot.tokens()) {
      counts.tokens++;
      yield hashed(`${tokenLine(t)}\n`);
    }
    for (const e of await snapshot.endpoints()) {
      counts.webhooks++;
      yield hashed(`${webhookLine(e)}\n`);
    }
    let after: bigint | undefined;
    for (;;) {
      const page = await snapshot.plants(after, PAGE);
      if (page.length === 0) break;
      counts.plants += page.length;
      // One chunk a page: a million plants are two hundred writes, not a million.
      let chunk = '';
      for (const p of page) chunk += `{"type":"plant",${plantJson(p).slice(1)}\n`;
      yield hashed(chunk);
      if (page.length < PAGE) break;
      after = page.at(-1)!.id;
    }
    await snapshot.close();
    yield `${writeJson({ type: 'end', ...counts, sha256: hash.digest('hex') })}\n`;
    return { ...counts, header };
  } finally {
    await snapshot.close();
  }
}
