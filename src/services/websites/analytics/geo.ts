import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Reader, type Response } from 'maxmind';

/** The country database shipped in @ip-location-db/geo-whois-asn-country-mmdb: never downloaded at run time. */
const DATABASE = '@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb';

interface CountryRecord {
  readonly country_code?: string;
}

let reader: Reader<Response> | undefined;

/**
 * The ISO 3166 country code of an address (upper case), or null when the database has none (private
 * ranges, unallocated space). The database (8 MB) is read once, on the first visit.
 */
export function countryOf(ip: string): string | null {
  reader ??= new Reader<Response>(readFileSync(createRequire(import.meta.url).resolve(DATABASE)));
  try {
    // This database's records hold the country code alone.
    return (reader.get(ip) as CountryRecord | null)?.country_code ?? null;
  } catch {
    return null;
  }
}
