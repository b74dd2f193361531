import { laravelTime } from '../kit/laravel-time.js';
import type { Results } from './checks/types.js';
import type { ReportResult } from './score.js';
import type { ReportRow } from './store.js';

/** A report as the API shows it; `results` only on show, store and update. */
export interface ReportRecord {
  id: number;
  url: string;
  project: string;
  result: ReportResult;
  score: number;
  results?: Results;
  privacy: number;
  /** Whether a password is set; the password itself is never shown. */
  password: boolean;
  generated_at: string;
  created_at: string;
  updated_at: string;
}

export function reportRecord(row: ReportRow, withResults: boolean): ReportRecord {
  return {
    id: row.id,
    url: row.url,
    project: row.project,
    result: row.result,
    score: row.score,
    ...(withResults ? { results: JSON.parse(row.results) as Results } : {}),
    privacy: row.privacy,
    password: row.password_hash !== null,
    generated_at: laravelTime(row.generated_at),
    created_at: laravelTime(row.created_at),
    updated_at: laravelTime(row.updated_at),
  };
}
