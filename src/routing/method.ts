/**
 * Request methods, as routing counts them and as the gateway lets them through. Pure.
 *
 * RFC 9110 makes methods case-sensitive, but upstreams differ: Laravel and Symfony upper-case the
 * method they read, so `post` is POST to them. A route's methods therefore match whatever the case
 * (`post` is counted as POST: counting too much is safe), and a method spelled with a lower-case
 * letter is then refused (400 invalid_method, after counting), so no upstream ever gets a spelling
 * it might read as another method than the one counted. Node's HTTP/1.1 parser already refuses such
 * methods (400, before any handler); this makes HTTP/2 and decision listeners agree with it.
 */

/** The spelling routes are compiled and matched in. */
export const methodKey = (method: string): string => method.toUpperCase();

/** Why the method may not go further, or undefined: any letter in it must be upper-case. */
export function methodRefusal(method: string): string | undefined {
  if (!/[a-z]/.test(method)) return undefined;
  return `The method "${method}" is spelled with lower-case letters; send "${methodKey(method)}".`;
}
