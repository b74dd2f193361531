import { Counter, type Registry } from 'prom-client';

// Per-request metric updates as plain number increments on cached cells; prom-client sees them only
// when the registry is scraped. prom-client's own children hash and validate their labels on every
// inc/observe, which the request path cannot afford.

type Labels = Record<string, string>;

/** One label set of a counter: `pending` is added to the prom-client counter at the next scrape. */
export interface CounterCell {
  pending: number;
}

/**
 * A prom-client Counter whose labelled increments go to cells first. Cells are flushed in creation
 * order, which is the order of their first increment: the exposition is the same as with inc().
 */
export class CountingCounter {
  readonly #cells: { readonly labels: Labels; readonly cell: CounterCell }[] = [];
  readonly #counter: Counter;

  constructor(config: { name: string; help: string; labelNames: readonly string[]; registers: Registry[] }) {
    this.#counter = new Counter({ ...config, collect: () => this.#flush() });
  }

  /** A new cell for a label set; callers cache it. */
  cell(labels: Labels): CounterCell {
    const cell: CounterCell = { pending: 0 };
    this.#cells.push({ labels, cell });
    return cell;
  }

  #flush(): void {
    for (const { labels, cell } of this.#cells) {
      if (cell.pending === 0) continue;
      this.#counter.inc(labels, cell.pending);
      cell.pending = 0;
    }
  }
}

/** One label set of a histogram: counts per bucket (not cumulative; the last is +Inf), sum and count. */
export class HistogramCell {
  readonly buckets: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.buckets = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.buckets[i]!++;
    this.sum += value;
    this.count++;
  }
}

interface Sample {
  value: number;
  metricName: string;
  exemplar: null | undefined;
  labels: Record<string, string | number>;
}

/**
 * A histogram registered in a prom-client Registry, with buckets incremented in place. Its
 * `get()` returns what prom-client's Histogram returns (same samples, order, labels and values),
 * so the text exposition and the node:cluster aggregation are unchanged.
 */
export class BucketHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #cells: HistogramCell[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
    private readonly labelled: boolean,
    registers: Registry[],
  ) {
    if (!labelled) this.cell({});
    for (const r of registers) r.registerMetric(this as never);
  }

  /** A new cell for a label set; callers cache it. Cells appear in the exposition in creation order. */
  cell(labels: Labels): HistogramCell {
    const cell = new HistogramCell(labels, this.buckets);
    this.#cells.push(cell);
    return cell;
  }

  /** The cell of a histogram without labels (it exists from the start, as in prom-client). */
  get unlabelled(): HistogramCell {
    return this.#cells[0]!;
  }

  /** Registry.resetMetrics(): zeroes the cells in place, as the request path holds them. */
  reset(): void {
    for (const cell of this.#cells) {
      cell.buckets.fill(0);
      cell.sum = 0;
      cell.count = 0;
    }
  }

  get(): Promise<{ name: string; help: string; type: string; values: Sample[]; aggregator: string }> {
    const values: Sample[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const cell of this.#cells) {
      if (cell.count === 0 && this.labelled) continue; // prom-client makes a label set on its first observation
      let cumulative = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += cell.buckets[i]!;
        values.push({
          value: cumulative,
          metricName: bucketName,
          exemplar: null,
          labels: { le: this.buckets[i]!, ...cell.labels },
        });
      }
      values.push(
        { value: cell.count, metricName: bucketName, exemplar: null, labels: { le: '+Inf', ...cell.labels } },
        { value: cell.sum, metricName: `${this.name}_sum`, exemplar: undefined, labels: { ...cell.labels } },
        {
          value: cell.count,
          metricName: `${this.name}_count`,
          exemplar: undefined,
          labels: { ...cell.labels },
        },
      );
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: this.aggregator,
    });
  }
}
