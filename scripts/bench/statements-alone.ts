// What each store's own statements for batches of creations reach with no server at all: the
// batch section's ceilings. Any server over these schemas runs the same statements on the same
// two cores (on SQLite, on its one writer's thread), so its batches cannot pass these rates.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { searchWords } from '../../src/domain/search-words.js';
import { LOCK, LOG_CHANGES } from '../../src/store/postgres/changes.js';
import { beginWith, IDLE_IN_TRANSACTION_MS, STATEMENT_TIMEOUT_MS } from '../../src/store/postgres/connection.js';
import { inline } from '../../src/store/postgres/inline.js';
import { SQL } from '../../src/store/postgres/plant-tx.js';

/** Creations in one batch. */
export const SIZE = 1000;

/** A value that stands for an array pgbench's server makes, until it is put in its place. */
const standIn = (name: string) => `@${name}`;

/**
 * pgbench's script of the store's own statements for a batch of SIZE creations, as the PostgreSQL
 * store sends them, their text taken from its modules (plant-tx.ts, changes.ts, pool.ts's
 * batchTransaction): a round trip of BEGIN with its settings, the ids locked, the plants and the
 * words of their names inserted and the log's position read; then one of the log's lock, the
 * SIZE changes written to the log (with the outbox's deliveries, none here) and COMMIT. Values are
 * written in by the store's own inline(); only the ids, and the changes' bodies that hold them,
 * are made by the server from pgbench's `:id` (generate_series, once a statement, as a literal
 * array is read once). With no Node at all, its rate is what PostgreSQL's own work for these rows
 * allows: any server over this schema shares the same cores with that work, so this bounds the
 * service's batches against the reference.
 */
export function storeStatements(schema: string): string {
  const series = (expression: string) => `ARRAY(SELECT ${expression} FROM generate_series(0, ${SIZE - 1}) AS g)`;
  const made: Record<string, string> = {
    ids: series(':id + g'),
    bodies: series(`'{"id":' || (:id + g) || ',"name":"Monstera","tag":"tropical"}'`),
  };
  const all = <T>(value: T) => Array<T>(SIZE).fill(value);
  const plant = { name: 'Monstera', tag: 'tropical' };
  const [word] = searchWords(plant.name);
  const statement = (text: string, values: unknown[] = []) =>
    Object.entries(made).reduce(
      (sql, [name, expression]) => sql.replaceAll(`$value$${standIn(name)}$value$`, expression),
      inline({ text, values }),
    );
  const ids = standIn('ids');
  const roundTrips = [
    [
      beginWith(schema, { statementTimeoutMs: STATEMENT_TIMEOUT_MS, idleMs: IDLE_IN_TRANSACTION_MS }),
      statement(SQL.lock.text, [ids]),
      statement(SQL.insert.text, [ids, all(plant.name), all(plant.tag), all(word), ids]),
      statement(SQL.position.text),
    ],
    [
      LOCK,
      statement(LOG_CHANGES, [
        all('plant.created'),
        ids,
        standIn('bodies'),
        all(plant.tag),
        all(null),
        all(String(Date.now())),
      ]),
      'COMMIT',
    ],
  ];
  // pgbench sends the statements a line joins with `\;` as one query: one round trip each.
  const oneLine = (sql: string) => sql.replace(/;\n/g, ' \\; ').replace(/\s*\n\s*/g, ' ');
  const lines = roundTrips.map((t) => `${t.map(oneLine).join(' \\; ')};`);
  return `\\set id random(1, 9000000000000) * ${SIZE}\n${lines.join('\n')}\n`;
}

/**
 * The SQLite store's own statements for batches of SIZE creations, alone in a process of their
 * own for `seconds` (sqlite-rows.mjs), ids from `first` on: plants a second, and its CPU per
 * batch in ms.
 */
export async function sqliteRowsAlone(
  path: string,
  seconds: number,
  first: bigint,
): Promise<{ rate: number; cpuMs: number }> {
  const script = new URL('sqlite-rows.mjs', import.meta.url).pathname;
  const { stdout } = await promisify(execFile)(process.execPath, [script, path, String(seconds), String(first)], {
    timeout: (seconds + 60) * 1000,
  });
  const r = JSON.parse(stdout) as { plants: number; seconds: number; cpuMs: number };
  return { rate: r.plants / r.seconds, cpuMs: r.cpuMs / (r.plants / SIZE) };
}
