// The few figures the health view draws, from two scrapes of GET /metrics (Prometheus' text
// format): counters become rates over the time between the scrapes, the latency histogram's
// buckets become quantiles of the requests answered in between, gauges are read as they are.

/** One scrape: each sample's name, labels and value, and when it was taken. */
export interface Scrape {
  at: number;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

export interface Figures {
  /** Requests a second by status class (2xx, 3xx, 4xx, 5xx). */
  requests: Record<string, number>;
  /** Latency of the requests answered between the scrapes, in milliseconds; undefined: none. */
  p50: number | undefined;
  p99: number | undefined;
  /** Webhook delivery attempts a second that succeeded, and that failed (retried or given up). */
  delivered: number;
  failed: number;
  streams: number;
  plants: number;
}

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

export function parseScrape(text: string, at: number): Scrape {
  const samples: Scrape['samples'] = [];
  for (const line of text.split('\n')) {
    const m = SAMPLE.exec(line);
    if (!m || line.startsWith('#')) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(LABEL)].map((l) => [l[1]!, l[2]!]));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { at, samples };
}

/** The sum of a metric's samples, by the value of one label (or all under ''). */
function sums(scrape: Scrape, name: string, by?: (labels: Record<string, string>) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of scrape.samples) {
    if (s.name !== name) continue;
    const key = by ? by(s.labels) : '';
    out.set(key, (out.get(key) ?? 0) + s.value);
  }
  return out;
}

/** The q-quantile of a histogram's observations between two scrapes, interpolated in its bucket. */
function quantile(before: Map<string, number>, now: Map<string, number>, q: number): number | undefined {
  const buckets = [...now.entries()]
    .map(([le, n]) => ({ le: le === '+Inf' ? Infinity : Number(le), n: n - (before.get(le) ?? 0) }))
    .sort((a, b) => a.le - b.le);
  const total = buckets.at(-1)?.n ?? 0;
  if (total <= 0) return undefined;
  let below = { le: 0, n: 0 };
  for (const b of buckets) {
    if (b.n >= q * total) {
      if (!Number.isFinite(b.le)) return below.le * 1000;
      const share = b.n === below.n ? 1 : (q * total - below.n) / (b.n - below.n);
      return (below.le + share * (b.le - below.le)) * 1000;
    }
    below = b;
  }
  return undefined;
}

export function figures(before: Scrape, now: Scrape): Figures {
  const seconds = Math.max((now.at - before.at) / 1000, 0.001);
  const rate = (name: string, by?: (l: Record<string, string>) => string) => {
    const [a, b] = [sums(before, name, by), sums(now, name, by)];
    return new Map([...b].map(([k, v]) => [k, Math.max(0, v - (a.get(k) ?? 0)) / seconds]));
  };
  const requests = Object.fromEntries(rate('plant_store_http_requests_total', (l) => `${l.status?.[0] ?? '?'}xx`));
  const byLe = (l: Record<string, string>) => l.le ?? '';
  const latency = 'plant_store_http_request_duration_seconds_bucket';
  const [b, n] = [sums(before, latency, byLe), sums(now, latency, byLe)];
  const attempts = rate('plant_store_webhook_attempts_total', (l) => l.outcome ?? '');
  const gauge = (name: string) => sums(now, name).get('') ?? 0;
  return {
    requests,
    p50: quantile(b, n, 0.5),
    p99: quantile(b, n, 0.99),
    delivered: attempts.get('delivered') ?? 0,
    failed: (attempts.get('retry') ?? 0) + (attempts.get('failed') ?? 0),
    streams: gauge('plant_store_change_streams'),
    plants: gauge('plant_store_plants'),
  };
}
