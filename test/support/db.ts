import { readJson } from '../../src/json/read-json.js';
import { runCli } from './cli.js';

export interface StoredPlant {
  id: bigint;
  name: string;
  tag: string | null;
}

/**
 * Every plant a store holds, ids as exact bigints, read with `plant-store export`: the same on
 * SQLite and PostgreSQL, and independent of the server under test.
 */
export function readStoredPlants(databaseUrl: string): StoredPlant[] {
  const r = runCli(['export'], { DATABASE_URL: databaseUrl });
  if (r.status !== 0) throw new Error(`plant-store export failed: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const p = readJson(line) as { id: number | bigint; name: string; tag?: string };
      return { id: BigInt(p.id), name: p.name, tag: p.tag ?? null };
    });
}
