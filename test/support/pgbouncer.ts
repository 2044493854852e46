import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ownFolder } from './clusters.js';

/**
 * Debian's PgBouncer (`apt-get install -y pgbouncer`, which .ci/run does) in transaction pooling
 * mode, in front of a PostgreSQL server: each transaction of a client may run on another server
 * connection, so anything a client leaves in a server session shows (a named prepared statement
 * already exists, or does not), and a start-up parameter other than the few it tracks is refused.
 * It runs from a temporary directory (its ini, user list and log) as the `postgres` user (when we
 * are root: it refuses to run as root).
 */

export const PGBOUNCER = process.env.PGBOUNCER_PATH ?? '/usr/sbin/pgbouncer';
export const pgbouncerMissing = !existsSync(PGBOUNCER);
/** The `skip` of a suite that needs PgBouncer: skipped without it, unless CI=true, where that fails. */
export const skipWithoutPgBouncer =
  pgbouncerMissing && process.env.CI !== 'true'
    ? `${PGBOUNCER} is not installed (apt-get install -y pgbouncer); with CI=true this test fails instead`
    : false;

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

/** A port free on 127.0.0.1 now (the system's choice), for a server that cannot be given port 0. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

export interface PgBouncerOptions {
  /** The PostgreSQL server every database name is sent to. */
  server: { host: string; port: number };
  /** Server connections per database and user: clients past it wait for one. */
  poolSize: number;
  /** Client connections it accepts in all. */
  maxClients?: number;
  port?: number;
}

export class PgBouncer {
  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  /** PgBouncer started and accepting connections. */
  static async start({ server, poolSize, maxClients = 1000, port }: PgBouncerOptions): Promise<PgBouncer> {
    const bouncer = new PgBouncer(port ?? (await freePort()), ownFolder('plant-store-pgbouncer-'));
    const { dir } = bouncer;
    writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n');
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=${server.host} port=${server.port}`,
        '[pgbouncer]',
        'pool_mode = transaction',
        'listen_addr = 127.0.0.1',
        `listen_port = ${bouncer.port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${join(dir, 'userlist.txt')}`,
        `default_pool_size = ${poolSize}`,
        `max_client_conn = ${maxClients}`,
        `logfile = ${bouncer.logFile}`,
        `pidfile = ${join(dir, 'pgbouncer.pid')}`,
        // Every client's connection and disconnection too, for the log a run is checked against.
        'log_connections = 1',
        'log_disconnections = 1',
        '',
      ].join('\n'),
    );
    const argv = ['-d', join(dir, 'pgbouncer.ini')];
    await run(asRoot ? 'runuser' : PGBOUNCER, asRoot ? ['-u', 'postgres', '--', PGBOUNCER, ...argv] : argv).catch(
      (err: { stderr?: string; message: string }) => {
        throw new Error(`${PGBOUNCER} did not start: ${err.stderr || err.message}\n${bouncer.log()}`);
      },
    );
    for (const started = Date.now(); !(await canConnect(bouncer.port));) {
      if (Date.now() - started > 10_000)
        throw new Error(`PgBouncer is not listening on ${bouncer.port}:\n${bouncer.log()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return bouncer;
  }

  get logFile(): string {
    return join(this.dir, 'pgbouncer.log');
  }

  /** A URL of `database` through PgBouncer, optionally with a schema of ours. */
  url(database: string, schema?: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}${schema ? `?schema=${schema}` : ''}`;
  }

  log(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
  }

  /** Stopped (immediate shutdown: its clients' connections are closed) and its directory deleted. */
  async stop(): Promise<void> {
    const pidFile = join(this.dir, 'pgbouncer.pid');
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : undefined;
    if (pid !== undefined && pid > 0) {
      try {
        process.kill(pid, 'SIGTERM');
        for (const asked = Date.now(); Date.now() - asked < 5_000;) {
          process.kill(pid, 0);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } catch {
        // Gone (ESRCH): stopped.
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
