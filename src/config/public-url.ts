import { z } from 'zod';

/**
 * Reads an embedded service's public base URL: an http(s) origin such as "https://api.example.com"
 * (a trailing "/" is dropped). The empty string stays empty: the service then links by path alone.
 * Throws a message fit for a config error otherwise.
 */
export function parsePublicUrl(text: string): string {
  const value = text.trim();
  if (value === '') return '';
  if (!URL.canParse(value)) throw new Error(`not a URL: "${value}" (use e.g. https://api.example.com)`);
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`must be an http or https URL, got "${value}"`);
  }
  if (url.username !== '' || url.password !== '') throw new Error(`must not hold credentials: "${value}"`);
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || /[?#]/.test(value)) {
    throw new Error(`must be a scheme and host only (no path, query or fragment), got "${value}"`);
  }
  // The origin: lower-case host, no default port, no trailing slash.
  return url.origin;
}

/** A config field holding a public base URL (see parsePublicUrl). */
export const publicUrl = z
  .string()
  .transform((text, ctx) => {
    try {
      return parsePublicUrl(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  })
  .default('');
