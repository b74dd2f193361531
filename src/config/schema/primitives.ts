// The config's building blocks: durations, sizes, names, lists and key parts.
import bytes from 'bytes';
import ms from 'ms';
import { z } from 'zod';
import { suggestion } from '../did-you-mean.js';

/** A duration: a number of milliseconds, or a string such as "50ms", "10s", "1m", "1h". */
export const duration = z
  .union([z.number().int().nonnegative(), z.string()])
  .transform((value, ctx) => {
    if (typeof value === 'number') return value;
    const parsed = /^\d+$/.test(value.trim()) ? Number(value) : ms(value as ms.StringValue);
    if (typeof parsed !== 'number' || !Number.isFinite(parsed) || parsed < 0) {
      ctx.addIssue({ code: 'custom', message: `not a duration: "${value}" (use e.g. 50ms, 10s, 1m, 1h)` });
      return z.NEVER;
    }
    return Math.round(parsed);
  })
  .meta({ title: 'duration', description: 'Milliseconds, or a string such as "50ms", "10s", "1m", "1h".' });

/** A size in bytes: a number, or a string such as "512kb" or "5mb". */
export const byteSize = z
  .union([z.number().int().nonnegative(), z.string()])
  .transform((value, ctx) => {
    const parsed = typeof value === 'number' ? value : bytes.parse(value);
    if (parsed === null || !Number.isFinite(parsed) || parsed < 0) {
      ctx.addIssue({ code: 'custom', message: `not a size: "${String(value)}" (use e.g. 512kb, 5mb)` });
      return z.NEVER;
    }
    return Math.floor(parsed);
  })
  .meta({ title: 'size', description: 'Bytes, or a string such as "512kb" or "5mb".' });

export const port = z.coerce.number().int().min(0).max(65535);
export const positiveInt = z.coerce.number().int().positive();
/** A count bound where 0 means "no bound". */
export const bound = z.coerce.number().int().min(0);

/** A comma-separated string (as environment variables give) or a YAML list. */
export const stringList = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s.length > 0))
  .meta({ title: 'list of strings, or a comma-separated string' });

export const name = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, 'letters, digits, "_", ".", ":" or "-"')
  .meta({ title: 'name' });

const KEY_PARTS = ['ip', 'user_agent', 'jwt', 'workspace_token'] as const;
const HEADER_PART = /^header:[A-Za-z0-9-]+$/;

/** Why a key part is refused, naming the value and the allowed set (undefined: it is valid). */
function keyPartProblem(v: string): string | undefined {
  if ((KEY_PARTS as readonly string[]).includes(v) || HEADER_PART.test(v)) return undefined;
  if (/^header:/i.test(v))
    return `not a header key part: "${v}" (use header:<Header-Name>, letters, digits and "-", e.g. header:X-Api-Key)`;
  const allowed = `${KEY_PARTS.join(', ')} or header:<Header-Name>`;
  return `unknown key part "${v}"; expected one of ${allowed}${suggestion(v, KEY_PARTS)}`;
}

export const keyPart = z
  .string()
  .superRefine((v, ctx) => {
    const problem = keyPartProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    anyOf: [{ enum: [...KEY_PARTS] }, { pattern: HEADER_PART.source }],
    title: 'key part',
    description:
      'ip (client IP, IPv6 by prefix), user_agent (hashed), jwt (verified visitor-session claim), ' +
      'workspace_token (verified token id), or header:<Name> (hashed header value).',
  });
