/** What a limiter key is derived from: the request as it is about to be sent. */
export interface KeyInput {
  readonly url: URL;
  readonly method: string;
  /** Read-only view of the request headers, lower-case names. */
  readonly header: (name: string) => string | undefined;
}

export type LimiterKeyFn = (request: KeyInput) => string;

/**
 * A 53-bit string hash (cyrb53): keys hold no raw credential, since hooks and logs see them. Only
 * collisions matter here, not secrecy against a determined reader.
 */
export function hashString(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/**
 * The default key: the origin (scheme, host, port) and the credential the request carries
 * (Authorization, else X-Widget-Token). Requests with the same key share one pause state.
 */
export const defaultLimiterKey: LimiterKeyFn = ({ url, header }) => {
  const credential = header('authorization') ?? header('x-widget-token');
  return credential === undefined ? url.origin : `${url.origin} ${hashString(credential)}`;
};
