// The feed section's readers: a child process of the bench (never the server's, whose one event
// loop and CPU figures they must not share) holding the Server-Sent Events streams of
// `GET /plants/changes` open over node:http. Told over IPC when each POST was answered and with
// which position, it gives each event's delivery latency: its arrival on a stream minus that time.
import { request, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Histogram, SseIds } from './sse.js';

export type ReaderCommand =
  | { open: { url: string; token: string; streams: number; query: string; headers?: Record<string, string> } }
  | { answered: [position: number, at: number][] }
  | { report: { expect: number } }
  | { close: true };

export interface ReaderReport {
  /** Events received on all streams since the last report, and those of the answered positions among them. */
  events: number;
  matched: number;
  p50: number;
  p99: number;
  max: number;
  /** Streams the server ended or refused since they were opened. */
  ended: number;
}

/** The same clock in every process of the machine, to the microsecond. */
const now = () => performance.timeOrigin + performance.now();
/** How long a report waits for the events it expects: those still missing then are missing. */
const WAIT_MS = 10_000;
const send = (m: unknown) => process.send!(m);

let streams: IncomingMessage[] = [];
let ended = 0;
let events = 0;
let latency = new Histogram();
/** When each answered position was answered, until its events are counted. */
const answered = new Map<number, number>();
/** Arrivals of positions whose answer has not been told yet (the event came first). */
const early = new Map<number, number[]>();

function arrived(position: number, at: number): void {
  events++;
  const sent = answered.get(position);
  if (sent !== undefined) latency.record(at - sent);
  else (early.get(position) ?? early.set(position, []).get(position)!).push(at);
}

/** A 503 with Retry-After, which a stream's reader waits out and tries again (EventSource does, after `retry:`). */
class Refused extends Error {
  constructor(
    readonly retryAfterMs: number,
    message: string,
  ) {
    super(message);
  }
}

/** 503s waited out while opening streams (the server's overload guard, as a burst of opens can trip it). */
let refusals = 0;
/** Streams opened with an Origin whose answer allowed it (Access-Control-Allow-Origin): the CORS section's. */
let allowed = 0;

async function openOne(url: string, token: string, query: string, headers = {}): Promise<IncomingMessage> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await tryOne(url, token, query, headers);
    } catch (err) {
      if (!(err instanceof Refused) || attempt === 30) throw err;
      refusals++;
      await sleep(err.retryAfterMs);
    }
  }
}

function tryOne(url: string, token: string, query: string, headers: Record<string, string>): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/plants/changes${query}`, {
      agent: false,
      headers: { ...headers, authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          const message = `GET /plants/changes answered ${res.statusCode}: ${body}`;
          const retryAfter = Number(res.headers['retry-after']);
          reject(
            res.statusCode === 503 && retryAfter > 0 ? new Refused(retryAfter * 1000, message) : new Error(message),
          );
        });
        return;
      }
      if (headers.origin !== undefined && res.headers['access-control-allow-origin'] === headers.origin) allowed++;
      const ids = new SseIds();
      res.setEncoding('latin1');
      res.on('data', (chunk: string) => {
        const at = now();
        for (const id of ids.push(chunk)) arrived(id, at);
      });
      res.on('end', () => ended++);
      res.on('error', () => undefined);
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

process.on('message', (m: ReaderCommand) => {
  void (async () => {
    if ('open' in m) {
      const { url, token, streams: n, query, headers } = m.open;
      // In batches: a thousand connections at once would overflow the server's listen backlog.
      for (let i = 0; i < n; i += 100) {
        const batch = Array.from({ length: Math.min(100, n - i) }, () => openOne(url, token, query, headers));
        streams.push(...(await Promise.all(batch)));
      }
      send({ opened: { streams: streams.length, refusals, allowed } });
      refusals = 0;
      allowed = 0;
    } else if ('answered' in m) {
      for (const [position, at] of m.answered) {
        answered.set(position, at);
        for (const arrival of early.get(position) ?? []) latency.record(arrival - at);
        early.delete(position);
      }
    } else if ('report' in m) {
      // The last changes may still be on their way: wait for them, but not for ever.
      const until = Date.now() + WAIT_MS;
      while (latency.count < m.report.expect && Date.now() < until) await sleep(50);
      const r: ReaderReport = {
        events,
        matched: latency.count,
        p50: latency.percentile(50),
        p99: latency.percentile(99),
        max: latency.max,
        ended,
      };
      events = 0;
      latency = new Histogram();
      answered.clear();
      early.clear();
      send({ report: r });
    } else {
      for (const s of streams) s.destroy();
      streams = [];
      ended = 0;
      send({ closed: true });
    }
  })().catch((err: unknown) => {
    send({ error: String(err) });
  });
});
