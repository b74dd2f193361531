// The names of the embedded services, in the one home both sides can import: the gateway's config
// validates an upstream's `embedded` field against them, the services' registry is keyed by them.
export const SERVICE_NAMES = ['websites', 'reports', 'widget', 'bulksync'] as const;

/** An embedded service, by the name an upstream's `embedded` field gives. */
export type ServiceName = (typeof SERVICE_NAMES)[number];
