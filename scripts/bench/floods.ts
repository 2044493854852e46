// Pipelined floods: the service's resident memory while clients pipeline list requests faster
// than they are answered, with and without reading the answers (issue: a few such connections
// took 300 MiB to 1 GB). The target is the one for every load: under 150 MB.
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startService } from './processes.js';
import { fmt, peakRss, table } from './report.js';
import { seedStore } from './seed.js';

export interface FloodBench {
  dir: string;
  token: string;
  seconds: number;
}

interface Flood {
  label: string;
  connections: number;
  /** Requests each connection writes, as fast as its socket takes them. */
  requests: number;
  read: boolean;
}

const FLOODS: Flood[] = [
  { label: '6 connections, never reading', connections: 6, requests: 30_000, read: false },
  { label: '8 connections, never reading', connections: 8, requests: 30_000, read: false },
  { label: '6 connections, reading the answers', connections: 6, requests: 30_000, read: true },
];

/** Runs one flood for `seconds`; resolves to the answers the clients read and the 503s among them. */
async function flood(port: number, token: string, limit: number, f: Flood, seconds: number) {
  const request = `GET /plants?limit=${limit} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`;
  const chunk = Buffer.from(request.repeat(100));
  let answers = 0;
  let refused = 0;
  const sockets: Socket[] = [];
  for (let c = 0; c < f.connections; c++) {
    const s = connect(port, '127.0.0.1');
    let written = 0;
    let tail = '';
    const write = () => {
      while (written < f.requests && s.write(chunk)) written += 100;
      if (written < f.requests && !s.destroyed) s.once('drain', write);
    };
    s.on('connect', write);
    s.on('error', () => undefined);
    if (f.read) {
      s.on('data', (d: Buffer) => {
        const text = tail + d.toString('latin1');
        const parts = text.split('HTTP/1.1 ');
        answers += parts.length - 1;
        refused += parts.slice(1).filter((p) => p.startsWith('503')).length;
        tail = text.slice(-16);
      });
    } else s.pause();
    sockets.push(s);
  }
  await sleep(seconds * 1000);
  for (const s of sockets) s.destroy();
  return { answers, refused };
}

/** The page the memory target is stated for (docs/performance.md), and the largest a list gives. */
const LIMITS = [100, 1000];

export async function pipelinedFloods(b: FloodBench): Promise<void> {
  console.log(`\n## Pipelined floods: GET /plants?limit=N on 1,000 plants, ${b.seconds * 2} s each\n`);
  const path = join(b.dir, 'floods.db');
  await seedStore(path, 1000, b.token);
  const rows: (string | number)[][] = [];
  let peak = 0;
  for (const limit of LIMITS) {
    const service = await startService({ DATABASE_URL: `sqlite:${path}`, PLANT_STORE_TOKEN: b.token });
    const port = Number(new URL(service.url).port);
    try {
      rows.push([limit, 'idle', fmt(service.rssMb()), '-', '-', '-']);
      for (const f of FLOODS) {
        let high = service.rssMb();
        const sampler = setInterval(() => (high = Math.max(high, service.rssMb())), 100);
        const { answers, refused } = await flood(port, b.token, limit, f, b.seconds * 2);
        await sleep(500);
        clearInterval(sampler);
        peak = Math.max(peak, high);
        const then = await fetch(`${service.url}/plants?limit=1`, { headers: { authorization: `Bearer ${b.token}` } });
        rows.push([limit, f.label, fmt(high), f.read ? answers : '-', f.read ? refused : '-', then.status]);
      }
    } finally {
      await service.stop();
    }
  }
  table(['limit', 'load', 'peak RSS MiB', 'answers read', '503s', 'then GET'], rows);
  console.log(peakRss('Peak RSS under pipelined floods', peak));
}
