import { describe, expect } from 'vitest';
import { openDatabase, type Db } from '../../../../../src/db/database.js';
import { createUser } from '../../../../../src/services/accounts/accounts.js';
import type { Hit } from '../../../../../src/services/websites/analytics/aggregate.js';
import { lastCompletePeriod } from '../../../../../src/services/websites/analytics/email/period.js';
import {
  smtpMailer,
  startEmailReports,
} from '../../../../../src/services/websites/analytics/email/scheduler.js';
import {
  ReportSender,
  type ReportSenderOptions,
} from '../../../../../src/services/websites/analytics/email/sender.js';
import { HitRecorder } from '../../../../../src/services/websites/analytics/recorder.js';
import { createStatsSource } from '../../../../../src/services/websites/analytics/sqlite-stats-source.js';
import type { SmtpSettings } from '../../../../../src/services/config.js';
import { DEFAULT_CONFIG } from '../../../../helpers/default-config.js';
import { embeddedEnv, newDataDir } from '../../../../helpers/embedded.js';
import { test as base } from '../../../../helpers/fixtures.js';
import { capturingLogger } from '../../../../helpers/log-capture.js';
import { silentLogger } from '../../../../helpers/gateway.js';
import { startSmtp, type Received, type TestSmtp } from '../../../../helpers/smtp.js';

/**
 * The e-mail reports against a real SMTP server (smtp-server on a free port) and a real SQLite file,
 * with an injected clock and an injected wait between attempts: no test waits for time to pass.
 */

// Wednesday 2026-11-18: the last complete week is Monday 2026-11-09 to Sunday 2026-11-15.
const NOW = Date.UTC(2026, 10, 18, 9, 0);
const IN_WEEK = Date.UTC(2026, 10, 12, 14, 30);

const smtpSettings = (smtp: TestSmtp): SmtpSettings => ({
  host: '127.0.0.1',
  port: smtp.port,
  tls: 'none',
  user: '',
  password: '',
  from: 'tollgate <reports@stats.example>',
});

const hit = (page: string, referrer: string | null, atMs = IN_WEEK): Hit => ({
  atMs,
  page,
  visitor: referrer !== null,
  referrer: referrer === '' ? null : referrer,
  searchEngine: null,
  socialNetwork: null,
  campaign: null,
  country: null,
  language: null,
  browser: null,
  operatingSystem: null,
  device: null,
  screenResolution: null,
  event: null,
});

/** A database with a user (with an address) owning a site with reports on, a site with them off, and visits. */
function seeded(): { db: Db; site: number } {
  const db = openDatabase(newDataDir());
  const { userId } = createUser(db, 'alice', undefined, 'alice@example.com');
  const { userId: noAddress } = createUser(db, 'bob');
  const add = db.prepare<[number, string, number], { id: number }>(
    "INSERT INTO websites (user_id, url, email, created_at, updated_at) VALUES (?, ?, ?, '', '') RETURNING id",
  );
  const site = add.get(userId, 'shop.example', 1)!.id;
  add.get(userId, 'quiet.example', 0);
  add.get(noAddress, 'bob.example', 1);
  const recorder = new HitRecorder(db);
  // Three visitors (two from search.example, one direct), five pageviews; one visit outside the week.
  for (const h of [
    hit('/', 'search.example'),
    hit('/pricing', null),
    hit('/pricing', 'search.example'),
    hit('/', ''),
    hit('/pricing', null),
    hit('/old', 'before.example', Date.UTC(2026, 10, 8, 12)),
  ]) {
    recorder.record(site, h);
  }
  return { db, site };
}

/** The decoded text of a received message (nodemailer may quote-print it). */
const body = (m: Received) =>
  m.raw
    .slice(m.raw.indexOf('\r\n\r\n') + 4)
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

const test = base
  .extend('smtp', { scope: 'file' }, async ({}, { onCleanup }) => {
    const smtp = await startSmtp();
    onCleanup(() => smtp.close());
    return smtp;
  })
  .extend(
    'sender',
    { scope: 'file' },
    ({ smtp }) =>
      function sender(db: Db, overrides: Partial<ReportSenderOptions> = {}) {
        const waits: number[] = [];
        const instance = new ReportSender({
          db,
          source: createStatsSource(db),
          mailer: smtpMailer(smtpSettings(smtp)),
          logger: silentLogger,
          frequency: 'weekly',
          retries: 2,
          retryDelay: 1000,
          leaseMs: 60_000,
          now: () => NOW,
          sleep: async (ms) => void waits.push(ms),
          ...overrides,
        });
        return { instance, waits };
      },
  );

describe('the report periods', () => {
  test.each([
    [
      'daily',
      Date.UTC(2026, 10, 18, 0, 0),
      { key: 'daily:2026-11-17', from: '2026-11-17', to: '2026-11-17' },
    ],
    ['weekly', NOW, { key: 'weekly:2026-11-09', from: '2026-11-09', to: '2026-11-15' }],
    [
      'weekly',
      Date.UTC(2026, 10, 16, 0, 0),
      { key: 'weekly:2026-11-09', from: '2026-11-09', to: '2026-11-15' },
    ],
    [
      'weekly',
      Date.UTC(2026, 10, 15, 23, 59),
      { key: 'weekly:2026-11-02', from: '2026-11-02', to: '2026-11-08' },
    ],
    [
      'monthly',
      Date.UTC(2026, 2, 1, 0, 0),
      { key: 'monthly:2026-02-01', from: '2026-02-01', to: '2026-02-28' },
    ],
    ['monthly', Date.UTC(2026, 0, 15), { key: 'monthly:2025-12-01', from: '2025-12-01', to: '2025-12-31' }],
  ] as const)('%s at %d', (frequency, now, period) => {
    expect(lastCompletePeriod(frequency, now)).toEqual(period);
  });
});

describe('sending', () => {
  test("the owner gets the last week's visitors, pageviews, top pages and referrers, once", async ({
    smtp,
    sender,
  }) => {
    const { db } = seeded();
    const before = smtp.received.length;
    const { instance } = sender(db);
    expect(await instance.runOnce()).toBe(1);
    const [message] = smtp.received.slice(before);
    expect(smtp.received.length - before).toBe(1);
    expect(message!.to).toEqual(['alice@example.com']);
    expect(message!.from).toBe('reports@stats.example');
    expect(message!.raw).toContain(
      'Subject: shop.example: 3 visitors, 5 pageviews (2026-11-09 to 2026-11-15)',
    );
    expect(body(message!)).toBe(
      [
        'Statistics of shop.example, 2026-11-09 to 2026-11-15 (UTC)',
        '',
        'Visitors: 3',
        'Pageviews: 5',
        '',
        'Top pages:',
        '  3  /pricing',
        '  2  /',
        '',
        'Top referrers:',
        '  2  search.example',
        '',
      ].join('\r\n'),
    );
    expect(db.prepare('SELECT website_id, period, sent_at FROM report_sends').all()).toEqual([
      { website_id: 1, period: 'weekly:2026-11-09', sent_at: new Date(NOW).toISOString() },
    ]);
    // The period is recorded: the next check sends nothing.
    expect(await instance.runOnce()).toBe(0);
    expect(smtp.received.length - before).toBe(1);
    db.close();
  });

  test('two senders on one database: one holds the lease, the report goes out once', async ({
    smtp,
    sender,
  }) => {
    const { db } = seeded();
    const before = smtp.received.length;
    const a = sender(db, { holder: 'a' }).instance;
    const b = sender(db, { holder: 'b' }).instance;
    const results = await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
    expect(results.reduce((n, r) => n + r, 0)).toBe(1);
    expect(smtp.received.length - before).toBe(1);
    // b takes over once a's lease has expired (a stopped), and finds nothing left to send.
    const later = sender(db, { holder: 'b', now: () => NOW + 60_001 }).instance;
    expect(await later.runOnce()).toBe(0);
    expect(db.prepare('SELECT holder FROM leases').pluck().get()).toBe('b');
    db.close();
  });

  test('a refused send is retried with a doubling delay, then delivered once', async ({ smtp, sender }) => {
    const { db } = seeded();
    const before = smtp.received.length;
    const attempts = smtp.attempts;
    smtp.refuseNext = 2;
    const { instance, waits } = sender(db);
    expect(await instance.runOnce()).toBe(1);
    expect(smtp.attempts - attempts).toBe(3);
    expect(waits).toEqual([1000, 2000]);
    expect(smtp.received.length - before).toBe(1);
    db.close();
  });

  test('retries are bounded: not recorded, logged, and tried again at the next check', async ({
    smtp,
    sender,
  }) => {
    const { db } = seeded();
    const { logger, lines } = capturingLogger();
    const attempts = smtp.attempts;
    smtp.refuseNext = 3;
    const { instance, waits } = sender(db, { logger });
    expect(await instance.runOnce()).toBe(0);
    expect(smtp.attempts - attempts).toBe(3);
    expect(waits).toEqual([1000, 2000]);
    expect(lines.map((l) => l.msg)).toEqual([
      'e-mail report failed; retrying',
      'e-mail report failed; retrying',
      'e-mail report not sent; tried again at the next check',
    ]);
    expect(db.prepare('SELECT count(*) FROM report_sends').pluck().get()).toBe(0);
    expect(await instance.runOnce()).toBe(1);
    db.close();
  });

  test('a stop during the wait between attempts gives the claim back: the next check sends', async ({
    smtp,
    sender,
  }) => {
    const { db } = seeded();
    const attempts = smtp.attempts;
    smtp.refuseNext = 1;
    // The stop aborts the wait, as the scheduler's does at shutdown.
    const stopped = sender(db, { sleep: () => Promise.reject(new Error('The operation was aborted')) });
    await expect(stopped.instance.runOnce()).rejects.toThrow('The operation was aborted');
    expect(smtp.attempts - attempts).toBe(1);
    expect(db.prepare('SELECT count(*) FROM report_sends').pluck().get()).toBe(0);
    stopped.instance.release();
    expect(await sender(db).instance.runOnce()).toBe(1);
    db.close();
  });

  test('a claim left by a killed sender expires after the lease: the period is sent once', async ({
    smtp,
    sender,
  }) => {
    const { db, site } = seeded();
    const before = smtp.received.length;
    // A process killed mid-send (SIGKILL) leaves its lease and its claim behind, and never gives them back.
    db.prepare("INSERT INTO leases (name, holder, expires_ms) VALUES ('email-reports', 'dead', ?)").run(
      NOW + 30_000,
    );
    db.prepare(
      "INSERT INTO report_sends (website_id, period, claimed_by, claimed_ms) VALUES (?, 'weekly:2026-11-09', 'dead', ?)",
    ).run(site, NOW);
    // While the lease could still be the dead process's, nothing is sent.
    expect(await sender(db, { holder: 'b', now: () => NOW + 30_000 }).instance.runOnce()).toBe(0);
    expect(smtp.received.length - before).toBe(0);
    // Past the lease (60 s), the claim is taken over and the report goes out, once.
    const after = sender(db, { holder: 'b', now: () => NOW + 60_001 }).instance;
    expect(await after.runOnce()).toBe(1);
    expect(await after.runOnce()).toBe(0);
    expect(smtp.received.length - before).toBe(1);
    expect(db.prepare('SELECT claimed_by, sent_at FROM report_sends').all()).toEqual([
      { claimed_by: 'b', sent_at: new Date(NOW + 60_001).toISOString() },
    ]);
    db.close();
  });

  test('no SMTP server: reports are off, said once in the log', async () => {
    const { logger, lines } = capturingLogger();
    const db = openDatabase(newDataDir());
    const settings = {
      smtp: undefined,
      frequency: 'weekly',
      checkInterval: 1000,
      retries: 0,
      retryDelay: 0,
    } as const;
    await startEmailReports(db, createStatsSource(db), settings, logger)();
    await startEmailReports(db, createStatsSource(db), settings, logger)();
    expect(lines.map((l) => l.msg)).toEqual([
      'e-mail reports off: no SMTP server configured (services.smtp.host)',
    ]);
    db.close();
  });
});

describe('through the gateway', () => {
  test('the gateway started with SMTP_HOST sends the due report at start', async ({ smtp, gateways }) => {
    const dataDir = newDataDir();
    const db = openDatabase(dataDir);
    const { userId } = createUser(db, 'carol', undefined, 'carol@example.com');
    db.prepare(
      "INSERT INTO websites (user_id, url, email, created_at, updated_at) VALUES (?, 'carol.example', 1, '', '')",
    ).run(userId);
    db.close();
    const next = smtp.nextMessage();
    const dayBefore = lastCompletePeriod('daily', Date.now()).from;
    await gateways.start(
      DEFAULT_CONFIG,
      embeddedEnv(dataDir, {
        SMTP_HOST: '127.0.0.1',
        SMTP_PORT: String(smtp.port),
        SMTP_TLS: 'none',
        SMTP_FROM: 'reports@stats.example',
        EMAIL_REPORTS_FREQUENCY: 'daily',
      }),
    );
    const message = await next;
    expect(message.to).toEqual(['carol@example.com']);
    // The day before the start (read on both sides of it, should the test run across midnight UTC).
    const subjects = [dayBefore, lastCompletePeriod('daily', Date.now()).from].map(
      (day) => `Subject: carol.example: 0 visitors, 0 pageviews (${day})`,
    );
    expect(subjects.some((subject) => message.raw.includes(subject))).toBe(true);
  });
});
