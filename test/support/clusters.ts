import { execFile } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

/**
 * PostgreSQL clusters of a test's own, made from PostgreSQL 15's binaries (no mock of a
 * database): a primary, streaming standbys made from it with `pg_basebackup -R`, promotion,
 * an immediate stop, paused replay. Each lives in a temporary directory on a port of its own
 * and runs as the `postgres` user, as initdb requires when the tests run as root.
 */

const BIN = process.env.POSTGRES_BIN || '/usr/lib/postgresql/15/bin';
const run = promisify(execFile);

/** Runs a PostgreSQL binary as `postgres` (when we are root; as ourselves otherwise). */
async function asPostgres(command: string, args: string[]): Promise<string> {
  const [file, argv] =
    process.getuid?.() === 0
      ? ['runuser', ['-u', 'postgres', '--', join(BIN, command), ...args]]
      : [join(BIN, command), args];
  try {
    const { stdout } = await run(file, argv, { timeout: 120_000 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${e.stderr || e.message}`);
  }
}

/** A folder the `postgres` user owns, for a cluster's data and its socket. */
function ownFolder(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (process.getuid?.() === 0) {
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
  }
  return dir;
}

/** The postgres user's ids (Debian's postgresql package creates the user). */
function postgresIds(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (line === undefined) throw new Error('no postgres user on this machine: install PostgreSQL 15 from Debian');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

export class Cluster {
  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  get data(): string {
    return join(this.dir, 'data');
  }

  /** A libpq-style URL of this cluster's `postgres` database, optionally with a schema of ours. */
  url(schema?: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres${schema ? `?schema=${schema}` : ''}`;
  }

  /** A new primary on `port`, started; `settings` are added to its postgresql.conf. */
  static async primary(port: number, settings: Record<string, string | number> = {}): Promise<Cluster> {
    const cluster = new Cluster(port, ownFolder('plant-store-pg-'));
    await asPostgres('initdb', ['-D', cluster.data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    cluster.configure({
      port,
      listen_addresses: "'127.0.0.1'",
      unix_socket_directories: `'${cluster.dir}'`,
      wal_level: 'replica',
      max_wal_senders: 10,
      hot_standby: 'on',
      // Test clusters need no crash safety of their own: what they are made to show is replication.
      fsync: 'off',
      full_page_writes: 'off',
      ...settings,
    });
    await cluster.start();
    return cluster;
  }

  /** A streaming standby of `primary` on `port` (`pg_basebackup -R`), started and replaying. */
  static async standby(
    primary: Cluster,
    port: number,
    settings: Record<string, string | number> = {},
  ): Promise<Cluster> {
    const cluster = new Cluster(port, ownFolder('plant-store-pg-'));
    const name = `standby_${port}`;
    await asPostgres('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres'],
      ...['-D', cluster.data, '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync'],
    ]);
    // -R wrote primary_conninfo; the application name is what synchronous_standby_names matches.
    cluster.configure({
      port,
      unix_socket_directories: `'${cluster.dir}'`,
      primary_conninfo: `'host=127.0.0.1 port=${primary.port} user=postgres application_name=${name}'`,
      ...settings,
    });
    await cluster.start();
    return cluster;
  }

  /** Appends settings to postgresql.auto.conf (later lines win); a running cluster needs a reload. */
  configure(settings: Record<string, string | number>): void {
    const lines = Object.entries(settings).map(([k, v]) => `${k} = ${v}\n`);
    appendFileSync(join(this.data, 'postgresql.auto.conf'), lines.join(''));
  }

  async reload(): Promise<void> {
    await asPostgres('pg_ctl', ['-D', this.data, 'reload']);
  }

  async start(): Promise<void> {
    await asPostgres('pg_ctl', ['-D', this.data, '-l', join(this.dir, 'log'), '-w', '-t', '60', 'start']);
  }

  /** `immediate` is a crash as far as the cluster's clients can tell: no goodbye, no checkpoint. */
  async stop(mode: 'immediate' | 'fast' = 'fast'): Promise<void> {
    await asPostgres('pg_ctl', ['-D', this.data, '-m', mode, '-w', 'stop']).catch(() => undefined);
  }

  async promote(): Promise<void> {
    await asPostgres('pg_ctl', ['-D', this.data, '-w', '-t', '60', 'promote']);
  }

  /** One statement on this cluster's `postgres` database, outside any store. */
  async sql<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: this.url(), connectionTimeoutMillis: 5000 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Holds replay on a standby (WAL still arrives): the standby falls behind by as much as the primary writes. */
  async pauseReplay(): Promise<void> {
    await this.sql('SELECT pg_wal_replay_pause()');
  }

  async resumeReplay(): Promise<void> {
    await this.sql('SELECT pg_wal_replay_resume()');
  }

  /** Stopped and deleted, whatever state it is in. */
  async destroy(): Promise<void> {
    await this.stop('immediate');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
