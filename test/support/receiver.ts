import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface Received {
  headers: Record<string, string>;
  body: string;
}

/** Settings for webhook tests: loopback subscribers, fast retries (the production defaults are 1 s to 1 h). */
export const FAST_WEBHOOKS = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_BACKOFF_BASE_MS: '50',
  WEBHOOK_BACKOFF_MAX_MS: '200',
  WEBHOOK_POLL_INTERVAL_MS: '50',
};

/** What the receiver does with one request: answer a status (with headers and a body), drop the connection, or hang. */
export type Behaviour = { status: number; headers?: Record<string, string>; body?: string } | 'drop' | 'hang';

/**
 * A real webhook subscriber on 127.0.0.1. Every request is recorded (also those it then fails);
 * `respond` decides each answer, 200 by default.
 */
export class Receiver {
  readonly requests: Received[] = [];
  respond: (r: Received, index: number) => Behaviour = () => ({ status: 200 });
  private readonly sockets = new Set<Socket>();
  private readonly server = createServer((req, res) => void this.handle(req, res));
  url = '';

  async start(port = 0): Promise<this> {
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    this.server.listen(port, '127.0.0.1');
    await once(this.server, 'listening');
    const address = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${address.port}/hook`;
    return this;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  /** Requests answered 2xx: what the subscriber accepted. */
  accepted(): Received[] {
    return this.requests.filter((r) => {
      const s = (r as Received & { status?: number }).status;
      return s !== undefined && s >= 200 && s < 300;
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const received: Received & { status?: number } = {
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
      body: Buffer.concat(chunks).toString('utf8'),
    };
    const index = this.requests.length;
    this.requests.push(received);
    const b = this.respond(received, index);
    if (b === 'hang') return;
    if (b === 'drop') {
      req.socket.destroy();
      return;
    }
    received.status = b.status;
    res.writeHead(b.status, b.headers).end(b.body);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.server.close();
    await once(this.server, 'close').catch(() => undefined);
  }
}
