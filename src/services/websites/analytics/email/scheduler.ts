import { setTimeout as wait } from 'node:timers/promises';
import { createTransport } from 'nodemailer';
import type { Logger } from 'pino';
import type { Db } from '../../../../db/database.js';
import type { EmailReportSettings, SmtpSettings } from '../../../config.js';
import type { StatsSource } from '../stats-source.js';
import { ReportSender, type Mailer } from './sender.js';

const SMTP_TIMEOUT_MS = 15_000;

/** A Mailer over nodemailer's SMTP transport. */
export function smtpMailer(smtp: SmtpSettings): Mailer & { close(): void } {
  const transport = createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.tls === 'secure',
    requireTLS: smtp.tls === 'starttls',
    ignoreTLS: smtp.tls === 'none',
    auth: smtp.user === '' ? undefined : { user: smtp.user, pass: smtp.password },
    // nodemailer's own socket timeout is 10 minutes: a hung server must not hold a send (and the
    // shutdown that waits for it) that long. A timed-out send is retried like any failed one.
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
  });
  return {
    async send(to, message) {
      await transport.sendMail({ from: smtp.from, to, subject: message.subject, text: message.text });
    },
    close: () => transport.close(),
  };
}

let offLogged = false;

/**
 * Starts the periodic check of this process (a first one right away), or logs once that reports are
 * off when no SMTP server is configured. Returns the stop, which ends a wait between attempts at
 * once and resolves when no check runs any more.
 */
export function startEmailReports(
  db: Db,
  source: StatsSource,
  settings: EmailReportSettings,
  logger: Logger,
): () => Promise<void> {
  const smtp = settings.smtp;
  if (!smtp) {
    if (!offLogged) logger.info('e-mail reports off: no SMTP server configured (services.smtp.host)');
    offLogged = true;
    return async () => {};
  }
  const stopping = new AbortController();
  const mailer = smtpMailer(smtp);
  const sender = new ReportSender({
    db,
    source,
    mailer,
    logger,
    frequency: settings.frequency,
    retries: settings.retries,
    retryDelay: settings.retryDelay,
    // Renewed before every attempt; outlives the longest wait between two of them.
    leaseMs: 2 * Math.max(settings.checkInterval, settings.retryDelay * 2 ** settings.retries),
    sleep: (ms) => wait(ms, undefined, { signal: stopping.signal, ref: false }),
  });
  let running: Promise<unknown> | undefined;
  const check = () => {
    running ??= sender
      .runOnce()
      .catch((err: unknown) => {
        if (!stopping.signal.aborted) logger.error({ err }, 'e-mail reports check failed');
      })
      .finally(() => (running = undefined));
  };
  const timer = setInterval(check, settings.checkInterval);
  timer.unref();
  const first = setImmediate(check);
  return async () => {
    clearInterval(timer);
    clearImmediate(first);
    stopping.abort();
    await running;
    sender.release();
    mailer.close();
  };
}
