import type {
  DailyTotals,
  DayRange,
  Dimension,
  EventValue,
  RecentVisit,
  StatsSource,
  TopChunk,
  TopPage,
  TopPagesQuery,
  TopQuery,
} from '../../src/services/websites/analytics/stats-source.js';

/** A StatsSource over in-memory counts, for the pages' unit tests (the aggregates are another branch's). */
export class MemoryStats implements StatsSource {
  /** website → day → totals */
  readonly days = new Map<number, Map<string, { visitors: number; pageviews: number }>>();
  /** website → dimension → day → value → count */
  readonly values = new Map<number, Map<Dimension, Map<string, Map<string, number>>>>();
  readonly visits = new Map<number, RecentVisit[]>();
  /** website → the event values' sums (the range is not filtered) */
  readonly eventSums = new Map<number, EventValue[]>();

  addDay(site: number, date: string, visitors: number, pageviews: number): this {
    const days = this.days.get(site) ?? new Map<string, { visitors: number; pageviews: number }>();
    days.set(date, { visitors, pageviews });
    this.days.set(site, days);
    return this;
  }

  addValue(site: number, dimension: Dimension, date: string, value: string, count: number): this {
    const dims = this.values.get(site) ?? new Map<Dimension, Map<string, Map<string, number>>>();
    const days = dims.get(dimension) ?? new Map<string, Map<string, number>>();
    const values = days.get(date) ?? new Map<string, number>();
    values.set(value, (values.get(value) ?? 0) + count);
    days.set(date, values);
    dims.set(dimension, days);
    this.values.set(site, dims);
    return this;
  }

  daily(site: number, range: DayRange): DailyTotals[] {
    const out: DailyTotals[] = [];
    for (
      let ms = Date.parse(`${range.from}T00:00:00Z`);
      ms <= Date.parse(`${range.to}T00:00:00Z`);
      ms += 86_400_000
    ) {
      const date = new Date(ms).toISOString().slice(0, 10);
      const d = this.days.get(site)?.get(date);
      out.push({ date, visitors: d?.visitors ?? 0, pageviews: d?.pageviews ?? 0 });
    }
    return out;
  }

  hourly(): { hour: number; visitors: number; pageviews: number }[] {
    return Array.from({ length: 24 }, (_, hour) => ({ hour, visitors: 0, pageviews: 0 }));
  }

  top(site: number, dimension: Dimension, range: DayRange, query: TopQuery): TopPage {
    const sums = new Map<string, number>();
    for (const [date, values] of this.values.get(site)?.get(dimension) ?? []) {
      if (date < range.from || date > range.to) continue;
      for (const [value, count] of values) {
        if (query.search && !value.toLowerCase().includes(query.search.toLowerCase())) continue;
        sums.set(value, (sums.get(value) ?? 0) + count);
      }
    }
    const rows = [...sums].map(([value, count]) => ({ value, count }));
    const dir = query.sort === 'max' ? -1 : 1;
    rows.sort((a, b) => dir * (a.count - b.count) || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
    return {
      rows: rows.slice(query.offset, query.offset + query.limit),
      total: rows.length,
      sum: rows.reduce((n, r) => n + r.count, 0),
    };
  }

  async *topPages(
    site: number,
    dimension: Dimension,
    range: DayRange,
    query: TopPagesQuery,
  ): AsyncGenerator<TopChunk> {
    const { rows, total, sum } = this.top(site, dimension, range, { ...query, sort: 'max' });
    yield { rows, total, sum };
  }

  recent(site: number, sinceMs: number): RecentVisit[] {
    return (this.visits.get(site) ?? []).filter((v) => Date.parse(v.at) > sinceMs);
  }

  hasData(site: number): boolean {
    return this.days.has(site) || this.values.has(site) || this.visits.has(site);
  }

  eventValues(site: number, _range: DayRange, names?: readonly string[]): EventValue[] {
    return (this.eventSums.get(site) ?? []).filter((v) => names === undefined || names.includes(v.name));
  }
}
