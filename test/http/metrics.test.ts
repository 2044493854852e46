// GET /metrics: Prometheus text format, read with a Prometheus text parser; its
// counters move with traffic; on the API port it needs metrics:read and refuses anonymous
// callers; METRICS_PORT serves it without a credential.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { createToken } from '../../src/use-cases/create-token.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { postPlant, send } from '../support/http.js';
import { stores, suiteOptions } from '../support/stores.js';

for (const store of stores) {
  describe(`GET /metrics [${store}]`, suiteOptions(store), () => {
    let server: TestApp;
    let metricsUrl: string;
    let nextId = 1;

    before(async () => {
      server = await buildTestApp({ store, logs: true, env: { METRICS_PORT: '0', HOST: '127.0.0.1' } });
      const line = server.logs.find((l) => l.includes('metrics listening'));
      assert.ok(line, `no "metrics listening" log line:\n${server.logs.join('\n')}`);
      metricsUrl = (JSON.parse(line) as { url: string }).url;
    });
    after(async () => server?.close());

    async function scrape(): Promise<{ text: string; families: Map<string, PrometheusFamily> }> {
      const r = await send(server, { path: '/metrics', headers: { authorization: `Bearer ${server.token}` } });
      assert.equal(r.status, 200, r.text);
      assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      const families = new Map(parsePrometheusTextFormat(r.text).map((f) => [f.name, f]));
      return { text: r.text, families };
    }

    /** The value of one counter or gauge sample; 0 when the labelled sample does not exist yet. */
    function value(families: Map<string, PrometheusFamily>, name: string, labels: Record<string, string> = {}): number {
      const family = families.get(name);
      assert.ok(family, `no metric ${name}`);
      const sample = family.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
      return sample ? Number(sample.value) : 0;
    }

    /**
     * A histogram series' count. The parser flattens labelled histograms into one series and
     * drops their count, so the `_count` line is read from the text (the parser has already
     * accepted the whole exposition).
     */
    function histogramCount(text: string, name: string, labels: string): number {
      const match = new RegExp(`^${name}_count\\{${labels.replace(/[{}/]/g, '\\$&')}\\} (\\d+)$`, 'm').exec(text);
      return match ? Number(match[1]) : 0;
    }

    describe('GET /metrics on the API port', () => {
      it('refuses anonymous callers and tokens without metrics:read', async () => {
        const anonymous = await send(server, { path: '/metrics' });
        assert.equal(anonymous.status, 401);
        assert.equal(anonymous.headers['www-authenticate'], 'Bearer realm="plant-store"');
        assert.doesNotMatch(anonymous.text, /plant_store/);

        const created = await createToken(server.services.store, { name: 'reader', scopes: ['plants:read'] });
        const r = await send(server, { path: '/metrics', headers: { authorization: `Bearer ${created.token}` } });
        assert.equal(r.status, 403);
        assert.match(String(r.headers['www-authenticate']), /error="insufficient_scope", scope="metrics:read"/);
      });

      it('parses as Prometheus text and holds the documented families', async () => {
        const { families } = await scrape();
        for (const [name, type] of [
          ['plant_store_http_requests_total', 'COUNTER'],
          ['plant_store_http_request_duration_seconds', 'HISTOGRAM'],
          ['plant_store_plants', 'GAUGE'],
          ['plant_store_store_errors_total', 'COUNTER'],
          ['plant_store_rate_limited_total', 'COUNTER'],
          ['plant_store_overload_rejections_total', 'COUNTER'],
          ['nodejs_eventloop_lag_seconds', 'GAUGE'],
          ['nodejs_eventloop_lag_p99_seconds', 'GAUGE'],
          ['process_cpu_user_seconds_total', 'COUNTER'],
          ['process_resident_memory_bytes', 'GAUGE'],
        ] as const) {
          assert.equal(families.get(name)?.type, type, name);
        }
        // Every store reports its backlog, whether it can take writes, and its group commits
        // (SQLite: WAL fsyncs; PostgreSQL: write transactions carrying batches).
        assert.equal(families.get('plant_store_store_pending_writes')?.type, 'GAUGE');
        assert.equal(value(families, 'plant_store_store_writable'), 1);
        const groupCommit = [
          ['plant_store_store_commits_total', 'COUNTER'],
          ['plant_store_store_committed_writes_total', 'COUNTER'],
        ] as const;
        for (const [name, type] of groupCommit) {
          assert.equal(families.get(name)?.type, type, name);
        }
      });

      it('moves its counters with traffic, labelled by route template and status', async () => {
        const before = await scrape();
        const created = { method: 'POST', route: '/plants', status: '200' };
        const missing = { method: 'GET', route: '/plants/{id}', status: '404' };
        const unknown = { method: 'GET', route: 'none', status: '404' };
        const series = 'method="POST",route="/plants",status="200"';

        for (let i = 0; i < 3; i++) {
          assert.equal((await postPlant(server, server.token, `{"id":${nextId++},"name":"m"}`)).status, 200);
        }
        const headers = { authorization: `Bearer ${server.token}` };
        assert.equal((await send(server, { path: '/plants/987654321', headers })).status, 404);
        assert.equal((await send(server, { path: '/nope/a/b?c=d' })).status, 404);

        const now = await scrape();
        const moved = (labels: Record<string, string>) =>
          value(now.families, 'plant_store_http_requests_total', labels) -
          value(before.families, 'plant_store_http_requests_total', labels);
        assert.equal(moved(created), 3);
        assert.equal(moved(missing), 1, 'a path with an id is counted under its template');
        assert.equal(moved(unknown), 1, 'an unknown path is counted under "none", never its raw URL');
        assert.ok(!now.text.includes('/nope'), 'raw URLs never become labels');
        assert.equal(
          histogramCount(now.text, 'plant_store_http_request_duration_seconds', series) -
            histogramCount(before.text, 'plant_store_http_request_duration_seconds', series),
          3,
        );
        if (store === 'sqlite') {
          assert.ok(
            value(now.families, 'plant_store_store_committed_writes_total') -
              value(before.families, 'plant_store_store_committed_writes_total') >=
              3,
          );
          assert.ok(value(now.families, 'plant_store_store_commits_total') >= 1);
        }
        assert.equal(value(now.families, 'plant_store_store_errors_total'), 0);

        // The plant count is cached for a few seconds: wait for it to catch up (bounded).
        let plants = value(now.families, 'plant_store_plants');
        for (let i = 0; i < 80 && plants !== nextId - 1; i++) {
          await sleep(100);
          plants = value((await scrape()).families, 'plant_store_plants');
        }
        assert.equal(plants, nextId - 1);
      });
    });

    describe('the credential-free metrics listener (METRICS_PORT)', () => {
      it('serves GET /metrics without a credential, and nothing else', async () => {
        const r = await fetch(metricsUrl);
        assert.equal(r.status, 200);
        assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
        const families = new Map(parsePrometheusTextFormat(await r.text()).map((f) => [f.name, f]));
        assert.ok(value(families, 'plant_store_http_requests_total', { route: '/plants', status: '200' }) >= 1);

        const other = await fetch(new URL('/plants', metricsUrl));
        assert.equal(other.status, 404);
        assert.deepEqual(Object.keys((await other.json()) as object).sort(), ['error', 'message']);
        const post = await fetch(metricsUrl, { method: 'POST' });
        assert.equal(post.status, 405);
        assert.equal(post.headers.get('allow'), 'GET, HEAD');
        await post.body?.cancel();
      });

      it('answers HEAD /metrics as the API port does: the status and headers of GET, no body', async () => {
        const get = await fetch(metricsUrl);
        const text = await get.text();
        const head = await fetch(metricsUrl, { method: 'HEAD' });
        assert.equal(head.status, 200);
        assert.equal(await head.text(), '');
        assert.equal(head.headers.get('content-type'), get.headers.get('content-type'));
        // The metrics move between the two requests, and their length with them.
        assert.equal(get.headers.get('content-length'), String(Buffer.byteLength(text)));
        assert.match(head.headers.get('content-length') ?? '', /^[1-9][0-9]*$/);
        assert.match(head.headers.get('x-request-id') ?? '', /./);
        assert.equal(head.headers.get('transfer-encoding'), get.headers.get('transfer-encoding'));
      });

      it('evaluates If-Match and If-None-Match as /metrics on the API port does: no ETag, only * names it', async () => {
        const refused = await fetch(metricsUrl, { headers: { 'if-match': '"x"' } });
        assert.equal(refused.status, 412);
        assert.deepEqual(await refused.json(), {
          error: 412,
          message: '/metrics has no ETag, so only If-Match: * can hold',
        });
        for (const method of ['GET', 'HEAD']) {
          const kept = await fetch(metricsUrl, { method, headers: { 'if-none-match': '*' } });
          assert.equal(kept.status, 304, method);
          assert.equal(kept.headers.get('content-length'), null, `${method} 304 has no Content-Length`);
          assert.equal(await kept.text(), '');
        }
        const held = await fetch(metricsUrl, { headers: { 'if-match': '*', 'if-none-match': '"x"' } });
        assert.equal(held.status, 200);
        await held.body?.cancel();
        const malformed = await fetch(metricsUrl, { headers: { 'if-none-match': 'x' } });
        assert.equal(malformed.status, 400);
        assert.match(((await malformed.json()) as { message: string }).message, /^If-None-Match must be/);
      });

      it('refuses query parameters, naming them, as /metrics on the API port does', async () => {
        const r = await fetch(new URL('/metrics?name[]=x&debug=1', metricsUrl));
        assert.equal(r.status, 400);
        const body = (await r.json()) as { error: number; message: string };
        assert.equal(body.error, 400);
        assert.match(body.message, /unknown query parameter\(s\) "name\[\]", "debug": GET \/metrics takes no query/);
      });

      it('is off unless METRICS_PORT is set', async () => {
        const plain = await buildTestApp({ store, logs: true });
        try {
          assert.equal(plain.app.metricsListener, undefined);
          assert.ok(!plain.logs.some((l) => l.includes('metrics listening')), plain.logs.join('\n'));
          assert.equal((await send(plain, { path: '/metrics' })).status, 401);
        } finally {
          await plain.close();
        }
      });
    });
  });
}
