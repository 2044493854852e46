// A real OTLP/HTTP receiver on 127.0.0.1, as a collector is: it takes what an exporter posts to
// /v1/traces with OTEL_EXPORTER_OTLP_PROTOCOL=http/json and decodes the spans (the JSON
// encoding of OTLP: ids in hex, attribute values as {stringValue}, {intValue}, ...).
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { pollUntil } from './poll.js';

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  traceState: string;
  name: string;
  /** OTLP's SpanKind: 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
  status: { code?: number; message?: string };
  /** The resource's attributes (service.name, ...). */
  resource: Record<string, string | number | boolean>;
}

const valueOf = (v: AnyValue) =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue!));
const attributes = (kvs: KeyValue[] = []) => Object.fromEntries(kvs.map((kv) => [kv.key, valueOf(kv.value)]));

interface ExportRequest {
  resourceSpans: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans: {
      spans: (Omit<ReceivedSpan, 'attributes' | 'links' | 'resource' | 'parentSpanId' | 'traceState'> & {
        parentSpanId?: string;
        traceState?: string;
        attributes?: KeyValue[];
        links?: { traceId: string; spanId: string }[];
      })[];
    }[];
  }[];
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Paths and content types of what was posted, to check the exporter's protocol. */
  readonly posts: { path: string; contentType: string }[] = [];
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.posts.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '' });
      if (req.url === '/v1/traces') this.decode(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  endpoint = '';

  async start(): Promise<this> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.endpoint = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  /** The environment that sends a server's spans here, soon after each ends. */
  env(): Record<string, string> {
    return {
      OTEL_EXPORTER_OTLP_ENDPOINT: this.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    };
  }

  private decode(body: ExportRequest): void {
    for (const rs of body.resourceSpans) {
      const resource = attributes(rs.resource?.attributes);
      for (const ss of rs.scopeSpans) {
        for (const s of ss.spans) {
          this.spans.push({
            ...s,
            parentSpanId: s.parentSpanId ?? '',
            traceState: s.traceState ?? '',
            attributes: attributes(s.attributes),
            links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
            resource,
          });
        }
      }
    }
  }

  /** Waits until a span that `match` accepts has come. */
  async span(what: string, match: (s: ReceivedSpan) => boolean): Promise<ReceivedSpan> {
    const came = await pollUntil(async () => this.spans.some(match), 10_000);
    if (!came) throw new Error(`no ${what} span came; received: ${this.spans.map((s) => s.name).join(', ')}`);
    return this.spans.find(match)!;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close').catch(() => undefined);
  }
}
