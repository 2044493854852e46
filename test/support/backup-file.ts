import { createHash } from 'node:crypto';
import { openStore } from '../../src/store/open-store.js';
import { KNOWN_SCHEMA_VERSIONS } from '../../src/store/schema-versions.js';
import type { Store } from '../../src/store/store.js';

/** A backup's header line, as `plant-store backup` writes it, with some fields changed. */
export function header(fields: Record<string, unknown> = {}): string {
  const store = (fields.store ?? 'sqlite') as keyof typeof KNOWN_SCHEMA_VERSIONS;
  return JSON.stringify({
    format: 'plant-store-backup',
    version: 1,
    plantStore: '0.2.0',
    store,
    schema: KNOWN_SCHEMA_VERSIONS[store] ?? KNOWN_SCHEMA_VERSIONS.sqlite,
    takenAt: '2025-01-31T12:00:00.000Z',
    ...fields,
  });
}

/**
 * A whole backup file from its lines (header first), with the end record that `backup` writes:
 * the counts and the SHA-256 of every byte before it. So a test can make a file whose only fault
 * is the one it means to test.
 */
export function backupFile(lines: string[], counts?: { plants: number; tokens: number; webhooks: number }): string {
  const body = lines.map((l) => `${l}\n`).join('');
  const n = (type: string) => lines.filter((l) => l.startsWith(`{"type":"${type}"`)).length;
  const end = {
    type: 'end',
    ...(counts ?? { plants: n('plant'), tokens: n('token'), webhooks: n('webhook') }),
    sha256: createHash('sha256').update(body).digest('hex'),
  };
  return `${body}${JSON.stringify(end)}\n`;
}

/** The lines of a backup file, without the last newline's empty string. */
export function backupLines(text: string): string[] {
  return text.split('\n').slice(0, -1);
}

/** What a store holds, counted outside any server. */
export async function storeCounts(databaseUrl: string): Promise<{ plants: number; tokens: number; webhooks: number }> {
  return withStore(databaseUrl, async (store) => ({
    plants: await store.plants.count(),
    tokens: await store.tokens.count(),
    webhooks: (await store.webhooks.listEndpoints(0)).length,
  }));
}

/** Opens a store (migrating it, as every command does), runs `work`, closes it. */
export async function withStore<T>(databaseUrl: string, work: (store: Store) => Promise<T>): Promise<T> {
  const { store } = await openStore({ databaseUrl, databasePoolSize: 2 });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
