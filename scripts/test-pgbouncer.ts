// `npm run test:pgbouncer`: the PostgreSQL half of the suite again, with every store, instance
// and command behind PgBouncer in transaction pooling mode (the manual, "Behind PgBouncer"). A
// PostgreSQL cluster of its own (PostgreSQL 15's binaries, a temporary directory) and Debian's
// PgBouncer in front of it, both on free ports; then scripts/test.mjs runs every test file that
// uses the test PostgreSQL server (support/stores.js), with TEST_POSTGRES_URL pointing at
// PgBouncer and TEST_POSTGRES_POOLER=pgbouncer (the suites looped over both stores run on
// PostgreSQL only: support/stores.ts).
// The run fails if a test fails, or if the tests' output, PgBouncer's log or PostgreSQL's log
// mentions a prepared statement (one that "already exists" or "does not exist": state a client
// left in a server session that another's transaction met) or a start-up parameter refused.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster } from '../test/support/clusters.js';
import { freePort, PgBouncer, pgbouncerMissing, PGBOUNCER } from '../test/support/pgbouncer.js';

/** What a run must never show anywhere. */
const SESSION_STATE = /prepared statement|unsupported startup parameter/i;

/**
 * PgBouncer's server connections: enough for the four processes of tests at once (each test
 * store's pool, several service instances, the tests' own connections), which otherwise wait for
 * one in PgBouncer's queue while a test holds a lock in a transaction of its own.
 */
const SERVER_CONNECTIONS = 40;

if (pgbouncerMissing) {
  console.error(`${PGBOUNCER} is not installed (apt-get install -y pgbouncer)`);
  process.exit(1);
}

// Files named on the command line (npm run test:pgbouncer -- test/x.test.ts), else every one that
// uses the test PostgreSQL server.
const named = process.argv.slice(2);
const files =
  named.length > 0
    ? named
    : readdirSync('test', { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => join('test', f))
        .filter((f) => readFileSync(f, 'utf8').includes('support/stores.js'))
        .sort();

const started = performance.now();
const cluster = await Cluster.primary(await freePort(), { max_connections: SERVER_CONNECTIONS + 20 });
let bouncer: PgBouncer | undefined;
let passed = false;
const output: Buffer[] = [];
try {
  bouncer = await PgBouncer.start({ server: { host: '127.0.0.1', port: cluster.port }, poolSize: SERVER_CONNECTIONS });
  console.log(
    `::: ${files.length} test files behind PgBouncer ${bouncer.port} (transaction mode) and PostgreSQL ${cluster.port}`,
  );
  const child = spawn(process.execPath, ['scripts/test.mjs', ...files], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TEST_POSTGRES_URL: bouncer.url('postgres'), TEST_POSTGRES_POOLER: 'pgbouncer' },
  });
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk: Buffer) => {
      output.push(chunk);
      process.stdout.write(chunk);
    });
  }
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const logs = {
    'the tests’ output': Buffer.concat(output).toString(),
    'PgBouncer’s log': bouncer.log(),
    'PostgreSQL’s log': readFileSync(join(cluster.dir, 'log'), 'utf8'),
  };
  passed = code === 0;
  for (const [name, text] of Object.entries(logs)) {
    const lines = text.split('\n').filter((l) => SESSION_STATE.test(l));
    if (lines.length === 0) continue;
    passed = false;
    console.log(`::: ${name} has ${lines.length} lines about session state, such as:\n${lines.slice(0, 5).join('\n')}`);
  }
} finally {
  await bouncer?.stop();
  await cluster.destroy();
}
const seconds = Math.round((performance.now() - started) / 1000);
console.log(`::: behind PgBouncer: ${passed ? 'passed' : 'FAILED'} in ${seconds} s`);
process.exit(passed ? 0 : 1);
