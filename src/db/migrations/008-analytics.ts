import type { Migration } from './migration.js';

/**
 * Analytics (issue 12), as phpAnalytics keeps it: one `stats` row per website, dimension, UTC day
 * and value, counting hits (no visit is stored whole). `recent_visits` holds the realtime view's
 * last minutes only (pruned; no IP, no cookie). `event_values` sums the values of custom events per
 * name and unit. Users get an e-mail address (the reports' recipient); `report_sends` claims each
 * website's report period before it is sent (so never twice) and records when it was, and `leases` elects the one process that sends them.
 */
export const analytics: Migration = {
  version: 8,
  sql: `
    ALTER TABLE users ADD COLUMN email TEXT;
    CREATE INDEX websites_url ON websites (url);
    CREATE TABLE stats (
      website_id INTEGER NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
      name TEXT NOT NULL,
      date TEXT NOT NULL,
      value TEXT NOT NULL,
      count INTEGER NOT NULL,
      PRIMARY KEY (website_id, name, date, value)
    ) WITHOUT ROWID;
    CREATE TABLE event_values (
      website_id INTEGER NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
      date TEXT NOT NULL,
      name TEXT NOT NULL,
      unit TEXT NOT NULL,
      count INTEGER NOT NULL,
      total REAL NOT NULL,
      PRIMARY KEY (website_id, date, name, unit)
    ) WITHOUT ROWID;
    CREATE TABLE recent_visits (
      id INTEGER PRIMARY KEY,
      website_id INTEGER NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
      at_ms INTEGER NOT NULL,
      page TEXT NOT NULL,
      referrer TEXT,
      country TEXT,
      browser TEXT,
      operating_system TEXT,
      device TEXT
    );
    CREATE INDEX recent_visits_website ON recent_visits (website_id, at_ms);
    CREATE INDEX recent_visits_at ON recent_visits (at_ms);
    CREATE TABLE report_sends (
      website_id INTEGER NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
      period TEXT NOT NULL,
      claimed_by TEXT NOT NULL,
      sent_at TEXT,
      PRIMARY KEY (website_id, period)
    ) WITHOUT ROWID;
    CREATE TABLE leases (
      name TEXT PRIMARY KEY,
      holder TEXT NOT NULL,
      expires_ms INTEGER NOT NULL
    ) WITHOUT ROWID;
  `,
};
