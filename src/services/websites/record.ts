import { laravelTime } from '../kit/laravel-time.js';
/** A website as the API returns it: the password only as whether one is set. */
export interface Website {
  readonly id: number;
  readonly url: string;
  readonly privacy: number;
  readonly password: boolean;
  readonly email: number;
  readonly exclude_bots: number;
  readonly exclude_params: string | null;
  readonly exclude_ips: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

/** A row of the websites table. */
export interface WebsiteRow {
  readonly id: number;
  readonly user_id: number;
  readonly url: string;
  readonly privacy: number;
  readonly password_hash: string | null;
  readonly email: number;
  readonly exclude_bots: number;
  readonly exclude_params: string | null;
  readonly exclude_ips: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

export function toWebsite(row: WebsiteRow): Website {
  return {
    id: row.id,
    url: row.url,
    privacy: row.privacy,
    password: row.password_hash !== null,
    email: row.email,
    exclude_bots: row.exclude_bots,
    exclude_params: row.exclude_params,
    exclude_ips: row.exclude_ips,
    created_at: laravelTime(row.created_at),
    updated_at: laravelTime(row.updated_at),
  };
}
