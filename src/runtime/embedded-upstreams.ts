import type { ServiceName } from '../service-names.js';
import type { WorkspaceTokenStore } from '../credentials/workspace-token.js';

/**
 * The one seam between the gateway and the embedded services: the gateway forwards to them over
 * HTTP like to any upstream and knows nothing of their insides. The CLI wires an implementation in
 * (src/cli/wiring.ts); a gateway without one runs upstreams with a URL only.
 */
export interface EmbeddedUpstreams {
  /** The base URL of the named service, started on first use. */
  url(name: ServiceName): Promise<string>;
  /** The workspace tokens of the services' database (identity.workspaceTokens.source "database"). */
  workspaceTokens(): Promise<WorkspaceTokenStore>;
  /** Stops the services; the gateway calls it last, once its own requests to them are done. */
  close(): Promise<void>;
}
