// The health view: charts of the last minutes from GET /metrics, scraped every few seconds while
// the view has been opened once (the token needs metrics:read; without it the view says so and
// stops): requests a second by status class, latency p50 and p99, webhook deliveries and
// failures, open streams, and the plants in the store.
import { h } from '../dom.js';
import { refusal, type Session } from '../session.js';
import { Chart } from './chart.js';
import { figures, parseScrape, type Figures, type Scrape } from './prometheus.js';

const EVERY_MS = 3000;
/** Five minutes of figures. */
const KEPT = 100;

export class HealthView {
  readonly element: HTMLElement;
  private readonly state = h('p', { role: 'status' }, 'Reading the metrics…');
  private readonly charts = {
    requests: new Chart('Requests a second', '/s', KEPT),
    latency: new Chart('Latency', ' ms', KEPT),
    webhooks: new Chart('Webhook deliveries a second', '/s', KEPT),
    streams: new Chart('Open streams', '', KEPT),
    plants: new Chart('Plants in the store', '', KEPT),
  };
  private readonly history: Figures[] = [];
  private last: Scrape | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(private readonly session: Session) {
    this.element = h(
      'section',
      { 'aria-labelledby': 'health-heading' },
      h('h2', { id: 'health-heading' }, 'Health'),
      this.state,
      h('div', { className: 'charts' }, ...Object.values(this.charts).map((c) => c.element)),
    );
  }

  /** Starts scraping, once. */
  start(): void {
    if (this.timer === undefined && !this.stopped) void this.scrape();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async scrape(): Promise<void> {
    const answer = await this.session.client.GET('/metrics', { parseAs: 'text' }).catch(() => undefined);
    if (this.stopped) return;
    if (!answer) {
      // The service does not answer (a restart): the next scrape tries again.
      this.state.textContent = 'The service does not answer; trying again.';
      this.timer = setTimeout(() => void this.scrape(), EVERY_MS);
      return;
    }
    const { data, error, response } = answer;
    if (error !== undefined || typeof data !== 'string') {
      this.state.textContent = refusal(response, error);
      if (response.status === 401 || response.status === 403) return;
    } else {
      const now = parseScrape(data, Date.now());
      if (this.last) this.add(figures(this.last, now));
      this.last = now;
      this.state.textContent = `Every ${EVERY_MS / 1000} s from /metrics; the last ${(KEPT * (EVERY_MS / 1000)) / 60} minutes.`;
    }
    this.timer = setTimeout(() => void this.scrape(), EVERY_MS);
  }

  private add(f: Figures): void {
    this.history.push(f);
    if (this.history.length > KEPT) this.history.shift();
    const of = (pick: (f: Figures) => number | undefined) => this.history.map(pick);
    this.charts.requests.draw(
      (['2xx', '4xx', '5xx'] as const).map((c, i) => ({
        name: c,
        line: `line-${i + 1}`,
        values: of((f) => f.requests[c] ?? 0),
      })),
    );
    this.charts.latency.draw([
      { name: 'p50', line: 'line-1', values: of((f) => f.p50) },
      { name: 'p99', line: 'line-2', values: of((f) => f.p99) },
    ]);
    this.charts.webhooks.draw([
      { name: 'delivered', line: 'line-1', values: of((f) => f.delivered) },
      { name: 'failed', line: 'line-3', values: of((f) => f.failed) },
    ]);
    this.charts.streams.draw([{ name: 'open', line: 'line-1', values: of((f) => f.streams) }]);
    this.charts.plants.draw([{ name: 'plants', line: 'line-1', values: of((f) => f.plants) }]);
  }
}
