import type { VisitorJwtSettings } from '../credentials/visitor-jwt.js';

export interface WebsitesSettings {
  /** The origin the list links start with ("" : links by path alone). */
  readonly publicUrl: string;
}

/** How the reports service links, fetches and analyses pages. Durations in milliseconds, sizes in bytes. */
export interface ReportsSettings {
  /** The origin the list links start with ("" : links by path alone). */
  readonly publicUrl: string;
  /** Let the analyser fetch loopback, private and link-local addresses (tests, local use). */
  readonly allowPrivateNetworks: boolean;
  readonly fetchTimeout: number;
  readonly maxRedirects: number;
  readonly maxPageSize: number;
  /** The longest the HTML analysis of one page may take (in a worker thread). */
  readonly analysisTimeout: number;
  /** Analyses waiting for a worker thread; one more is refused with 503. */
  readonly analysisQueue: number;
}

export interface BulkSyncSettings {
  /** A "<id>|<secret>" workspace token ensured at start; empty: none. */
  readonly bootstrapToken: string;
  /** The workspace the bootstrap token belongs to. */
  readonly bootstrapWorkspace: string;
  /** The largest body a client may send, as the handshake reports it (0: no bound). */
  readonly maxBodyBytes: number;
}

/** The HTML pages' cookies. Durations in milliseconds. */
export interface PagesSettings {
  /** The secret that signs the pages' cookies; empty: pages-cookie.secret in dataDir. */
  readonly secretFile: string;
  readonly sessionTtl: number;
  readonly unlockTtl: number;
  readonly exports: ExportSettings;
}

/** The statistics pages' CSV exports at once (0: no bound), and the cut of a stalled one (ms). */
export interface ExportSettings {
  readonly perAddress: number;
  readonly total: number;
  readonly stallTimeout: number;
}

/** The SMTP server of the e-mail reports. */
export interface SmtpSettings {
  readonly host: string;
  readonly port: number;
  readonly tls: 'starttls' | 'secure' | 'none';
  readonly user: string;
  readonly password: string;
  readonly from: string;
}

/** The e-mail reports: durations in milliseconds. */
export interface EmailReportSettings {
  /** undefined: no SMTP server configured, no reports. */
  readonly smtp: SmtpSettings | undefined;
  readonly frequency: 'daily' | 'weekly' | 'monthly';
  readonly checkInterval: number;
  readonly retries: number;
  readonly retryDelay: number;
}

/** The widget's per-workspace budgets (0: no bound); the period in milliseconds. */
export interface WidgetSettings {
  readonly sessionsPerWorkspace: number;
  readonly messagesPerWorkspace: number;
  readonly budgetPeriod: number;
}

/** Bounds on what the database keeps. Durations in milliseconds, sizes in bytes. */
export interface StorageSettings {
  readonly maxDistinctValues: number;
  readonly recentVisits: number;
  /** 0: kept forever. */
  readonly widgetEvents: number;
  readonly walCheckpointSize: number;
  readonly housekeepingInterval: number;
}

/**
 * Everything the embedded services read, and nothing else: they know neither the gateway's routes
 * nor its limits. Made once at start (changing it needs a restart).
 */
export interface ServicesConfig {
  /** Where the SQLite database (tollgate.db) lives. */
  readonly dataDir: string;
  /** API keys that each get a user of the websites and reports APIs at start. */
  readonly bootstrapApiKeys: readonly string[];
  /** Largest request body a service accepts (413 beyond), in bytes. */
  readonly maxBodySize: number;
  readonly websites: WebsitesSettings;
  readonly reports: ReportsSettings;
  readonly bulksync: BulkSyncSettings;
  readonly pages: PagesSettings;
  readonly emailReports: EmailReportSettings;
  readonly widget: WidgetSettings;
  readonly storage: StorageSettings;
  /**
   * The gateway's trusted proxies (identity.trustedProxies): the collector walks X-Forwarded-For
   * past them, as the gateway does, to the visitor's address.
   */
  readonly trustedProxies: readonly string[];
  /** What the widget signs visitor tokens with; undefined: the widget cannot start. */
  readonly visitorJwt: VisitorJwtSettings | undefined;
}
