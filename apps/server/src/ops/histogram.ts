/**
 * The server's Prometheus histograms (request durations, click batches, pool and lock waits), kept
 * by the server itself instead of prom-client's Histogram, and scraped through prom-client's
 * registry in the same text.
 *
 * Why: the click lane observes a request duration per click, and its batch two values per batch,
 * thousands a second. prom-client's observation, even through a series bound once with `labels()`,
 * builds a labels object, checks every label name, joins the labels into a string key and counts the
 * bucket in an object keyed by the bound's number (turned into a string each time): about 1 µs an
 * observation, 2.7% of the click lane's event loop in a profile (docs/performance.md, "The server's
 * histograms, counted by the server"). Here a series is a typed array of bucket counts, found once
 * when bound; an observation is a scan of the bounds and two adds (~20 ns).
 *
 * What a scrape sees is prom-client's histogram to the byte: series in the order of their first
 * observation (a histogram without labels shows its one series, zeros included, from the start, and
 * again only once observed after a reset), cumulative `_bucket` lines with `le` first, then `_sum`
 * and `_count`. test/histogram.test.ts checks this against prom-client itself.
 */
import type { Metric, Registry } from 'prom-client';

/** One label set's counts: per bucket (values over the last bound are in `count` only), their sum and count. */
interface Series {
  labels: Record<string, string>;
  buckets: Float64Array;
  sum: number;
  count: number;
  /** Whether a scrape shows it (see `listed`). */
  listed: boolean;
}

export interface HistogramConfig<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
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

interface Scraped<V> {
  name: string;
  help: string;
  type: 'histogram';
  aggregator: 'sum';
  values: V[];
}

export interface BoundSeries {
  observe(value: number): void;
}

export class Histogram<L extends string = never> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly bounds: Float64Array;
  private readonly labelNames: readonly L[];
  private readonly byKey = new Map<string, Series>();
  /** The series a scrape shows, in the order they were listed. */
  private listed: Series[] = [];

  constructor(config: HistogramConfig<L>) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames ?? [];
    this.bounds = Float64Array.from(config.buckets);
    // prom-client shows a histogram without labels from the start, with zero counts.
    if (this.labelNames.length === 0) this.list(this.seriesOf({} as Labels<L>));
    for (const registry of config.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these labels (an object, or the values in the order of `labelNames`), bound once. */
  labels(...args: [Labels<L>] | string[]): BoundSeries {
    const series = this.seriesOf(typeof args[0] === 'object' ? args[0] : this.labelsFrom(args as string[]));
    return { observe: (value) => this.add(series, value) };
  }

  /** `observe(value)` without labels, `observe(labels, value)` with them. */
  observe(...args: [number] | [Labels<L>, number]): void {
    if (args.length === 1) this.add(this.seriesOf({} as Labels<L>), args[0]);
    else this.add(this.seriesOf(args[0]), args[1]);
  }

  reset(): void {
    for (const series of this.listed) {
      series.buckets.fill(0);
      series.sum = 0;
      series.count = 0;
      series.listed = false;
    }
    this.listed = [];
  }

  /** What prom-client's registry formats: the shape of its Histogram's getForPromString. */
  async getForPromString(): Promise<Scraped<ScrapedValue & { sharedLabels: Record<string, string> }>> {
    const values: Array<ScrapedValue & { sharedLabels: Record<string, string> }> = [];
    const bucketName = `${this.name}_bucket`;
    for (const series of this.listed) {
      const sharedLabels = series.labels;
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += series.buckets[i];
        values.push({ labels: { le: this.bounds[i] }, sharedLabels, value: cumulative, metricName: bucketName, exemplar: null });
      }
      values.push(
        { labels: { le: '+Inf' }, sharedLabels, value: series.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels, value: series.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels, value: series.count, metricName: `${this.name}_count` },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The same lines with each one's labels in one object (the registry's JSON form). */
  async get(): Promise<Scraped<ScrapedValue>> {
    const data = await this.getForPromString();
    return { ...data, values: data.values.map(({ sharedLabels, ...line }) => ({ ...line, labels: { ...line.labels, ...sharedLabels } })) };
  }

  private labelsFrom(values: readonly string[]): Labels<L> {
    if (values.length !== this.labelNames.length) throw new Error(`Invalid number of arguments (${values.length}) for ${this.name}: expected ${this.labelNames.length}`);
    const labels = {} as Labels<L>;
    this.labelNames.forEach((name, i) => (labels[name] = values[i]));
    return labels;
  }

  private seriesOf(labels: Labels<L>): Series {
    let key = '';
    for (const name of this.labelNames) {
      // Every label is required: the server's series always carry all of theirs.
      if (labels[name] === undefined) throw new Error(`Label ${name} is missing for ${this.name}`);
      key += `${name}\u0000${labels[name]}\u0000`;
    }
    let series = this.byKey.get(key);
    if (!series) {
      // A copy with the label names in their declared order, the order a scrape prints them in.
      const own: Record<string, string> = {};
      for (const name of this.labelNames) own[name] = String(labels[name]);
      series = { labels: own, buckets: new Float64Array(this.bounds.length), sum: 0, count: 0, listed: false };
      this.byKey.set(key, series);
    }
    return series;
  }

  private list(series: Series): void {
    series.listed = true;
    this.listed.push(series);
  }

  private add(series: Series, value: number): void {
    // prom-client refuses a value that is not a finite number.
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    if (!series.listed) this.list(series);
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        series.buckets[i] += 1;
        break;
      }
    }
    series.sum += value;
    series.count += 1;
  }
}
