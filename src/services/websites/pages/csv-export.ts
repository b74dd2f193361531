import { Readable } from 'node:stream';
import ipaddr from 'ipaddr.js';
import { parseAddress } from '../../../net/client-ip.js';
import type { TopChunk } from '../analytics/stats-source.js';
import { csvField } from '../../kit/csv.js';
import { share } from './stats-view.js';

/** The CSV export's header line; each page of values follows as its lines. */
export const CSV_HEADER = 'value,count,share\r\n';

/** A page of values as CSV lines, exactly as `csv()` writes the whole table. */
export function csvLines(page: Pick<TopChunk, 'rows' | 'sum'>): string {
  let out = '';
  for (const r of page.rows) {
    out += `${csvField(r.value)},${csvField(r.count)},${csvField(share(r.count, page.sum))}\r\n`;
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
      yield CSV_HEADER;
      clearTimeout(timer);
      for await (const page of pages) {
        if (page.rows.length === 0) continue;
        waiting();
        yield csvLines(page);
        clearTimeout(timer);
      }
    } finally {
      clearTimeout(timer);
      await pages.return(undefined);
    }
  }
  return Readable.from(chunks(), { objectMode: false, highWaterMark: 16 * 1024 });
}
