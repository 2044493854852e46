// The read benchmark on PostgreSQL: the same loads as on SQLite (reads.ts), each store a schema
// of its own, filled through the plants table (its triggers keep the words of names as the
// write path does). Skipped, saying why, when PostgreSQL cannot be reached.
import { randomBytes } from 'node:crypto';
import { connectOrSkip, SERVER } from './postgres.js';
import { startService } from './processes.js';
import { readLoadsOn, type ReadBench } from './reads.js';
import { fmt } from './report.js';
import { seededPlant, seedPlantWords } from './seed.js';

const BATCH = 50_000;

export async function postgresReads(b: ReadBench & { token: string }): Promise<void> {
  console.log(
    `\n## Reads on PostgreSQL, 1,000 and ${b.big.toLocaleString('en')} plants, ${b.rounds} rounds of ${b.seconds} s, A/B interleaved\n`,
  );
  const admin = await connectOrSkip();
  if (!admin) return;
  const schemas: string[] = [];
  try {
    await readLoadsOn(
      b,
      async (size) => {
        const schema = `bench_${randomBytes(4).toString('hex')}`;
        schemas.push(schema);
        // The service migrates the new schema; the plants go in once its tables exist.
        const service = await startService({ DATABASE_URL: `${SERVER}?schema=${schema}`, PLANT_STORE_TOKEN: b.token });
        const seeding = performance.now();
        for (let start = 0; start < size; start += BATCH) {
          const plants = Array.from({ length: Math.min(BATCH, size - start) }, (_, k) => seededPlant(start + k, size));
          await admin.query({
            text: `INSERT INTO ${schema}.plants (id, name, tag) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])`,
            values: [plants.map((p) => String(p.id)), plants.map((p) => p.name), plants.map((p) => p.tag)],
          });
        }
        await seedPlantWords(admin, schema);
        await admin.query(`VACUUM ANALYZE ${schema}.plants, ${schema}.plant_words`);
        console.log(`seeded ${size.toLocaleString('en')} plants in ${fmt((performance.now() - seeding) / 1000)} s`);
        return service;
      },
      true,
    );
  } finally {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}
