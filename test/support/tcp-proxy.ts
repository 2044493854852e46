import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy a test puts between a server and PostgreSQL, to cut the link without
 * touching the database everyone shares.
 * - `refuse`: live connections are closed and new ones are accepted and closed at once.
 * - `blackhole`: nothing is forwarded or closed; bytes vanish, as on a dead network path.
 * - `restore`: connections held by the cut are closed and new ones are forwarded again.
 */
export class TcpProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private mode: 'open' | 'refuse' | 'blackhole' = 'open';

  private constructor(
    private readonly target: { host: string; port: number },
    readonly port: number,
    server: Server,
  ) {
    this.server = server;
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const proxy = new TcpProxy(target, (server.address() as { port: number }).port, server);
    server.on('connection', (socket) => proxy.accept(socket));
    return proxy;
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }

  private accept(client: Socket): void {
    this.track(client);
    if (this.mode === 'refuse') return void client.destroy();
    if (this.mode === 'blackhole') return void client.pause();
    const upstream = createConnection(this.target);
    this.track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  cut(mode: 'refuse' | 'blackhole'): void {
    this.mode = mode;
    for (const s of this.sockets) {
      if (mode === 'refuse') {
        s.destroy();
      } else {
        s.unpipe();
        s.pause();
      }
    }
  }

  restore(): void {
    this.mode = 'open';
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    this.restore();
    this.server.close();
    await once(this.server, 'close');
  }
}
