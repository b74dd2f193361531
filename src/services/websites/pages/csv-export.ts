import { Readable } from 'node:stream';
import ipaddr from 'ipaddr.js';
import { parseAddress } from '../../../net/client-ip.js';
import type { EventValue, TopChunk } from '../analytics/stats-source.js';
import { csvField } from '../../kit/csv.js';
import { valuesByName } from './display.js';
import { share } from './stats-view.js';

/** The CSV export's header line; each page of values follows as its lines. */
export const CSV_HEADER = 'value,count,share\r\n';
/** The events' export has a fourth column: each event's value sums, per unit ("3950 cents; 2 kg"). */
export const EVENTS_CSV_HEADER = 'value,count,share,values\r\n';

/** An event's value sums as its CSV field shows them: plain numbers, each with its unit. */
export function csvValues(values: readonly EventValue[]): string {
  return values.map((v) => (v.unit === '' ? String(v.total) : `${v.total} ${v.unit}`)).join('; ');
}

/**
 * A page of values as CSV lines, exactly as `csv()` writes the whole table; with `values` (the
 * events' export), the value sums of each row's name.
 */
export function csvLines(
  page: Pick<TopChunk, 'rows' | 'sum'>,
  values?: ReadonlyMap<string, readonly EventValue[]>,
): string {
  let out = '';
  for (const r of page.rows) {
    out += `${csvField(r.value)},${csvField(r.count)},${csvField(share(r.count, page.sum))}`;
    if (values) out += `,${csvField(csvValues(values.get(r.value) ?? []))}`;
    out += '\r\n';
  }
  return out;
}

/** The key an address's exports are counted under: IPv4 as is, IPv6 as its /64 ("" unknown). */
export function exportKey(address: string | undefined): string {
  const addr = address === undefined ? undefined : parseAddress(address);
  if (!addr) return '';
  if (addr.kind() === 'ipv4') return addr.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${addr.toString()}/64`).toString()}/64`;
}

/**
 * The export as a byte stream: the header, then each page's lines as the reader asks for them (a
 * small buffer, so an unread download holds one page at most). A reader that asks for nothing
 * for `stallTimeout` ms gets `onStall` (which cuts the response).
 */
export function csvStream(
  pages: AsyncGenerator<TopChunk>,
  stallTimeout: number,
  onStall: () => void,
  /** The events' export: the value sums of a page's names. */
  valuesOf?: (names: readonly string[]) => readonly EventValue[],
): Readable {
  async function* chunks(): AsyncGenerator<string> {
    // Armed while a chunk waits for the reader, cleared once it asks for the next.
    let timer: NodeJS.Timeout | undefined;
    const waiting = () => {
      timer = setTimeout(onStall, stallTimeout);
      timer.unref();
    };
    try {
      waiting();
      yield valuesOf ? EVENTS_CSV_HEADER : CSV_HEADER;
      clearTimeout(timer);
      for await (const page of pages) {
        if (page.rows.length === 0) continue;
        waiting();
        const values = valuesOf && valuesByName(valuesOf(page.rows.map((r) => r.value)));
        yield csvLines(page, values);
        clearTimeout(timer);
      }
    } finally {
      clearTimeout(timer);
      await pages.return(undefined);
    }
  }
  return Readable.from(chunks(), { objectMode: false, highWaterMark: 16 * 1024 });
}
