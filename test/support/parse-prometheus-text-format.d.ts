declare module 'parse-prometheus-text-format' {
  /** One sample: `value` for counters and gauges; histograms come flattened (see metrics.test.ts). */
  export interface PrometheusSample {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface PrometheusFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: PrometheusSample[];
  }
  /** Parses the Prometheus text exposition format; throws on a malformed line. */
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
