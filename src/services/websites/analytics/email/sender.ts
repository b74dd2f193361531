import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../../../../db/database.js';
import { emailReportRecipients, type EmailReportDue as Due } from '../../data.js';
import type { StatsSource } from '../stats-source.js';
import { composeReport, type ReportMessage } from './compose.js';
import { acquireLease, releaseLease } from './lease.js';
import { claimSend, markSent, renewClaim, settledSends, unclaimSend } from './report-sends.js';
import { lastCompletePeriod, type Frequency } from './period.js';

/** Sends one message; rejects when the server refuses it or cannot be reached. */
export interface Mailer {
  send(to: string, message: ReportMessage): Promise<void>;
}

export interface ReportSenderOptions {
  readonly db: Db;
  readonly source: StatsSource;
  readonly mailer: Mailer;
  readonly logger: Logger;
  readonly frequency: Frequency;
  /** Further attempts of a failed send, each after a doubled delay (ms, from retryDelay). */
  readonly retries: number;
  readonly retryDelay: number;
  /** How long the lease lasts unless renewed; renewed before every send. */
  readonly leaseMs: number;
  /** The clock and the wait between attempts, injected by the tests (no test waits). */
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** This process's name in the lease row. */
  readonly holder?: string;
}

export const LEASE = 'email-reports';
/** The top pages and referrers a report lists. */
export const REPORT_TOP = 10;

/**
 * Sends each website's report of the last complete period, at most once: only while this process
 * holds the lease, and only after claiming the website's period in report_sends (a claim another
 * run already made is skipped; sent_at is set once the server accepted the message). A send that
 * keeps failing gives its claim back: the next check tries again.
 */
export class ReportSender {
  readonly #o: ReportSenderOptions;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly holder: string;

  constructor(options: ReportSenderOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.holder = options.holder ?? randomUUID();
  }

  #holdLease(): boolean {
    return acquireLease(this.#o.db, LEASE, this.holder, this.#now(), this.#o.leaseMs);
  }

  /** One check: sends what is due; returns how many reports were sent. */
  async runOnce(): Promise<number> {
    const { db, source, logger } = this.#o;
    if (!this.#holdLease()) return 0;
    const period = lastCompletePeriod(this.#o.frequency, this.#now());
    // A claim not sent and not renewed for a lease is of a process that died mid-send (SIGKILL,
    // power loss): it never gives it back, so it expires, and the period is sent once after all.
    const stale = () => this.#now() - this.#o.leaseMs;
    const settled = settledSends(db, period.key, stale());
    const due = emailReportRecipients(db).filter((site) => !settled.has(site.id));
    let sent = 0;
    for (const site of due) {
      // A claim before the send, one statement: of two runs that found the period due, one sends.
      if (!claimSend(db, site.id, period.key, this.holder, this.#now(), stale())) continue;
      const daily = source.daily(site.id, period);
      const top = (dimension: 'pages' | 'referrers') =>
        source.top(site.id, dimension, period, { sort: 'max', limit: REPORT_TOP, offset: 0 }).rows;
      const message = composeReport({
        website: site.url,
        period,
        visitors: daily.reduce((n, d) => n + d.visitors, 0),
        pageviews: daily.reduce((n, d) => n + d.pageviews, 0),
        pages: top('pages'),
        referrers: top('referrers'),
      });
      let delivered: boolean | 'lease-lost' = false;
      try {
        delivered = await this.#deliver(site, period.key, message);
      } finally {
        // A stop during the wait between attempts throws: the claim goes back all the same.
        if (delivered !== true) unclaimSend(db, site.id, period.key, this.holder);
      }
      if (delivered === true) {
        markSent(db, site.id, period.key, new Date(this.#now()).toISOString());
        sent++;
        logger.info({ website: site.id, period: period.key }, 'e-mail report sent');
        continue;
      }
      // Not sent (the claim was given back): the next check, of whichever process holds the lease, tries again.
      if (delivered === 'lease-lost') break;
    }
    return sent;
  }

  async #deliver(site: Due, period: string, message: ReportMessage): Promise<boolean | 'lease-lost'> {
    for (let attempt = 0; ; attempt++) {
      // Another process may have taken over while this one waited: it sends, this one stops.
      // The claim is renewed with the lease, so a live sender's claim never expires.
      if (!this.#holdLease() || !this.#renewClaim(site.id, period)) return 'lease-lost';
      try {
        await this.#o.mailer.send(site.email, message);
        return true;
      } catch (err) {
        const last = attempt >= this.#o.retries;
        this.#o.logger.warn(
          { err, website: site.id, period, attempt: attempt + 1 },
          last ? 'e-mail report not sent; tried again at the next check' : 'e-mail report failed; retrying',
        );
        if (last) return false;
        await this.#sleep(this.#o.retryDelay * 2 ** attempt);
      }
    }
  }

  #renewClaim(websiteId: number, period: string): boolean {
    return renewClaim(this.#o.db, websiteId, period, this.holder, this.#now());
  }

  /** Gives the lease up (at shutdown). */
  release(): void {
    releaseLease(this.#o.db, LEASE, this.holder);
  }
}
