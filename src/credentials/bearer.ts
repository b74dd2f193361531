/** The token of an "Authorization: Bearer <token>" header; undefined for any other scheme or shape. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  return m?.[1];
}
