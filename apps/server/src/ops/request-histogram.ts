/**
 * reftrack_http_request_duration_seconds, kept by the server itself instead of prom-client's
 * Histogram, and scraped through the same registry in the same text.
 *
 * Why: the click lane observes one duration per click, thousands a second. prom-client's
 * observation, even through a series bound once with `labels()`, builds a labels object, checks
 * every label name, joins the labels into a string key and counts the bucket in an object keyed by
 * the bound's number (turned into a string each time): 2.7% of the click lane's event loop in a
 * profile of session 55 (docs/performance.md, "The request histogram"). Here a bound series is a
 * typed array of bucket counts, found once; an observation is a scan of the bounds and two adds.
 *
 * What a scrape sees is prom-client's histogram to the byte — series in the order they were first
 * observed, cumulative `_bucket` lines with `le` first, then `_sum` and `_count` — checked against
 * prom-client itself in test/request-histogram.test.ts. A series appears at its first observation,
 * as in prom-client.
 */
import type { Metric, Registry } from 'prom-client';

/** One label set's counts: per bucket (the last one is +Inf only), their sum and count. */
interface Series {
  labels: Record<string, string>;
  buckets: Float64Array;
  sum: number;
  count: number;
}

export interface RequestHistogramConfig<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  /** Upper bounds, ascending. */
  buckets: readonly number[];
  registers: Registry[];
}

type Labels<L extends string> = Record<L, string>;

/** One line of a scrape; `exemplar` as prom-client gives it (null on bucket lines: none are kept). */
interface ScrapedValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
  exemplar?: null;
}

export class RequestHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly bounds: Float64Array;
  private readonly labelNames: readonly L[];
  private readonly byKey = new Map<string, Series>();
  /** The series observed at least once, in the order of their first observation. */
  private observed: Series[] = [];

  constructor(config: RequestHistogramConfig<L>) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
    this.bounds = Float64Array.from(config.buckets);
    for (const registry of config.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these labels, bound once: its `observe` is the hot path. */
  labels(labels: Labels<L>): { observe(seconds: number): void } {
    const series = this.seriesOf(labels);
    return { observe: (seconds) => this.add(series, seconds) };
  }

  observe(labels: Labels<L>, seconds: number): void {
    this.add(this.seriesOf(labels), seconds);
  }

  reset(): void {
    for (const series of this.observed) {
      series.buckets.fill(0);
      series.sum = 0;
      series.count = 0;
    }
    this.observed = [];
  }

  /** What prom-client's registry formats (the same shape as its Histogram's getForPromString). */
  async getForPromString(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: Array<ScrapedValue & { sharedLabels: Record<string, string> }> }> {
    const values: Array<ScrapedValue & { sharedLabels: Record<string, string> }> = [];
    const bucketName = `${this.name}_bucket`;
    for (const series of this.observed) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += series.buckets[i];
        values.push({ labels: { le: this.bounds[i] }, sharedLabels: series.labels, value: cumulative, metricName: bucketName, exemplar: null });
      }
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: series.labels, value: series.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_count` },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The same values with each line's labels in one object (the registry's JSON form). */
  async get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: ScrapedValue[] }> {
    const data = await this.getForPromString();
    return { ...data, values: data.values.map(({ sharedLabels, ...line }) => ({ ...line, labels: { ...line.labels, ...sharedLabels } })) };
  }

  private seriesOf(labels: Labels<L>): Series {
    let key = '';
    for (const name of this.labelNames) key += `${name}\u0000${labels[name]}\u0000`;
    let series = this.byKey.get(key);
    if (!series) {
      // A copy, with the label names in their declared order: the order a scrape prints them in.
      const own: Record<string, string> = {};
      for (const name of this.labelNames) own[name] = labels[name];
      series = { labels: own, buckets: new Float64Array(this.bounds.length), sum: 0, count: 0 };
      this.byKey.set(key, series);
    }
    return series;
  }

  private add(series: Series, seconds: number): void {
    // prom-client refuses a value that is not a finite number; every caller here passes a duration.
    if (!Number.isFinite(seconds)) throw new TypeError(`Value is not a valid number: ${seconds}`);
    if (series.count === 0) this.observed.push(series);
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]) {
        series.buckets[i] += 1;
        break;
      }
    }
    series.sum += seconds;
    series.count += 1;
  }
}
