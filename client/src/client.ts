import { BulkSyncApi } from './api/bulk-sync.js';
import { ReportsApi } from './api/reports.js';
import { WebsitesApi } from './api/websites.js';
import { WidgetApi } from './api/widget.js';
import { RateLimitedFetch, type RateLimitOptions } from './rate-limited-fetch.js';

export interface TollgateClientOptions extends RateLimitOptions {
  /** {base_url}: the websites API, and by default the widget and bulk-sync endpoints. */
  readonly baseUrl: string;
  /** {analyzer_url}: the reports API's host (a different host from baseUrl). */
  readonly analyzerUrl?: string;
  /** The widget endpoints' base URL (default: baseUrl). */
  readonly widgetUrl?: string;
  /** The bulk-sync endpoints' base URL (default: baseUrl). */
  readonly bulkSyncUrl?: string;
  /** The API key of the websites and reports APIs. */
  readonly apiKey?: string;
  /** A workspace API token (`<id>|<secret>`) for the bulk-sync endpoints. */
  readonly workspaceToken?: string;
  /** A visitor JWT for the widget endpoints (or call widget.withToken later). */
  readonly visitorToken?: string;
}

/**
 * The typed APIs, each at its own base URL, over one rate-limit-aware fetch: they share its pause
 * state, keyed per base URL and credential.
 */
export class TollgateClient {
  readonly http: RateLimitedFetch;
  readonly websites: WebsitesApi;
  readonly widget: WidgetApi;
  readonly bulkSync: BulkSyncApi;
  readonly #reports: ReportsApi | undefined;

  constructor(options: TollgateClientOptions) {
    const http = new RateLimitedFetch(options);
    this.http = http;
    const withToken = (baseUrl: string, token: string | undefined) =>
      token === undefined ? { baseUrl, http } : { baseUrl, http, token };
    this.websites = new WebsitesApi(withToken(options.baseUrl, options.apiKey));
    this.widget = new WidgetApi(withToken(options.widgetUrl ?? options.baseUrl, options.visitorToken));
    this.bulkSync = new BulkSyncApi(
      withToken(options.bulkSyncUrl ?? options.baseUrl, options.workspaceToken),
    );
    this.#reports =
      options.analyzerUrl === undefined
        ? undefined
        : new ReportsApi(withToken(options.analyzerUrl, options.apiKey));
  }

  /** The reports API; it needs `analyzerUrl`, since it lives on the analyzer host. */
  get reports(): ReportsApi {
    if (!this.#reports) throw new Error('the reports API needs analyzerUrl (the analyzer host)');
    return this.#reports;
  }
}
