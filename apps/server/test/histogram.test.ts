import { describe, expect, it } from 'vitest';
import client from 'prom-client';
import { Histogram } from '../src/ops/histogram.js';

const CONFIG = {
  name: 'reftrack_http_request_duration_seconds',
  help: 'Time to answer a request, per route pattern, method and status class (its _count is the request rate).',
  labelNames: ['method', 'route', 'status_class'] as const,
  buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
};

type Labels = { method: string; route: string; status_class: string };

/** The same metric twice, each in a registry of its own: prom-client's Histogram and the server's. */
function pair() {
  const library = new client.Registry();
  const own = new client.Registry();
  return {
    library,
    own,
    reference: new client.Histogram({ ...CONFIG, registers: [library] }),
    histogram: new Histogram({ ...CONFIG, registers: [own] }),
  };
}

const CLICK: Labels = { method: 'POST', route: '/api/v1/track/click', status_class: '2xx' };
const PROGRAMS: Labels = { method: 'GET', route: '/api/dashboard/programs', status_class: '4xx' };
const SALE: Labels = { method: 'POST', route: '/api/v1/track/sale', status_class: '5xx' };

// Values on the bounds, between them, under the first and over the last, and sums that are not exact in binary.
const VALUES = [0.002, 0.0021, 0.0001, 0.005, 0.1, 0.30000000000000004, 0.7, 1, 2.5, 4.99, 5, 5.01, 120, 0, 0.013, 0.024999];

describe('Metrics: the server’s histograms', () => {
  it('scrapes as prom-client’s Histogram to the byte, series in the order of their first observation', async () => {
    const { library, own, reference, histogram } = pair();
    expect(await own.metrics()).toBe(await library.metrics());
    const boundOwn = histogram.labels(CLICK);
    const boundReference = reference.labels(CLICK);
    // Bound but never observed: no series yet, in either.
    histogram.labels(SALE);
    reference.labels(SALE);
    expect(await own.metrics()).toBe(await library.metrics());
    VALUES.forEach((value, i) => {
      const labels = [PROGRAMS, CLICK, SALE][i % 3];
      if (labels === CLICK) {
        boundOwn.observe(value);
        boundReference.observe(value);
      } else {
        histogram.observe(labels, value);
        reference.observe(labels, value);
      }
    });
    const text = await own.metrics();
    expect(text).toBe(await library.metrics());
    expect(text).toContain('reftrack_http_request_duration_seconds_count{method="POST",route="/api/v1/track/click",status_class="2xx"} 5');
    expect(text.indexOf('route="/api/dashboard/programs"')).toBeLessThan(text.indexOf('route="/api/v1/track/click"'));
  });

  it('gives the registry’s JSON form as prom-client does', async () => {
    const { library, own, reference, histogram } = pair();
    for (const value of VALUES) {
      histogram.observe(CLICK, value);
      reference.observe(CLICK, value);
    }
    expect(await own.getMetricsAsJSON()).toEqual(await library.getMetricsAsJSON());
  });

  it('starts over on a registry reset, bound series included', async () => {
    const { library, own, reference, histogram } = pair();
    const boundOwn = histogram.labels(CLICK);
    const boundReference = reference.labels(CLICK);
    boundOwn.observe(0.003);
    boundReference.observe(0.003);
    histogram.observe(SALE, 0.2);
    reference.observe(SALE, 0.2);
    own.resetMetrics();
    library.resetMetrics();
    expect(await own.metrics()).toBe(await library.metrics());
    histogram.observe(SALE, 0.04);
    reference.observe(SALE, 0.04);
    boundOwn.observe(0.5);
    boundReference.observe(0.5);
    expect(await own.metrics()).toBe(await library.metrics());
  });

  it('refuses a value that is not a finite number, as prom-client does, and counts nothing for it', async () => {
    const { own, histogram } = pair();
    expect(() => histogram.observe(CLICK, Number.NaN)).toThrow(TypeError);
    expect(() => histogram.labels(CLICK).observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(await own.metrics()).not.toContain('_count{');
  });

  it('shows a histogram without labels from the start, zeros included, as prom-client does, and after a reset only once observed', async () => {
    const library = new client.Registry();
    const own = new client.Registry();
    const config = { name: 'reftrack_click_batch_size', help: 'Clicks per committed click batch.', buckets: [1, 2, 5, 10, 30, 60, 120, 250, 500] };
    const reference = new client.Histogram({ ...config, registers: [library] });
    const histogram = new Histogram({ ...config, registers: [own] });
    expect(await own.metrics()).toBe(await library.metrics());
    expect(await own.metrics()).toContain('reftrack_click_batch_size_count 0');
    for (const size of [1, 3, 30, 31, 499, 500, 501]) {
      histogram.observe(size);
      reference.observe(size);
    }
    expect(await own.metrics()).toBe(await library.metrics());
    own.resetMetrics();
    library.resetMetrics();
    expect(await own.metrics()).toBe(await library.metrics());
    histogram.observe(7);
    reference.observe(7);
    expect(await own.metrics()).toBe(await library.metrics());
  });

  it('binds a series by its label values in the order of the label names, as prom-client does', async () => {
    const library = new client.Registry();
    const own = new client.Registry();
    const config = { name: 'reftrack_tracking_group_size', help: 'Leads or sales per group commit.', labelNames: ['route'] as const, buckets: [1, 2, 5, 10, 20, 50, 100, 200] };
    const reference = new client.Histogram({ ...config, registers: [library] });
    const histogram = new Histogram({ ...config, registers: [own] });
    const sales = histogram.labels('sale');
    const salesReference = reference.labels('sale');
    for (const size of [1, 4, 200, 250]) {
      sales.observe(size);
      salesReference.observe(size);
    }
    histogram.observe({ route: 'lead' }, 3);
    reference.observe({ route: 'lead' }, 3);
    expect(await own.metrics()).toBe(await library.metrics());
    expect(() => histogram.labels('lead', 'extra')).toThrow();
  });
});
