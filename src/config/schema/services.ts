// The embedded services' settings (websites, reports, widget, bulk sync).
import { z } from 'zod';
import { publicUrl } from '../public-url.js';
import { bound, byteSize, duration, name, port, positiveInt, stringList } from './primitives.js';

const publicUrlDescription = (api: string, example: string) =>
  `The ${api} API's public base URL (an http or https origin, e.g. ${example}): its list links ` +
  "(`links`, `meta.path`) start with it. Empty: they are the path and query alone. The request's " +
  'Host header is never used.';

export const services = z.strictObject({
  dataDir: z
    .string()
    .min(1)
    .default('./data')
    .meta({
      description:
        'Where the embedded services keep their SQLite database (tollgate.db, shared by the four services and the CLI) ' +
        'and the generated JWT secret.',
    }),
  bootstrapApiKeys: stringList.prefault([]).meta({
    description:
      'API keys that each get a user of the websites and reports APIs at start (containers, tests). ' +
      'With none, and no users yet, the first start creates user "admin" (its key written to first-start.txt in dataDir, mode 0600) ' +
      'and the widget workspace "demo".',
  }),
  maxBodySize: byteSize
    .refine((n) => n >= 1, 'must be at least 1 byte')
    .prefault('5mb')
    .meta({ description: 'The largest request body the embedded services accept (413 beyond).' }),
  websites: z
    .strictObject({
      publicUrl: publicUrl.meta({ description: publicUrlDescription('websites', 'http://localhost:8080') }),
    })
    .prefault({})
    .meta({ description: 'The websites service.' }),
  reports: z
    .strictObject({
      publicUrl: publicUrl.meta({
        description: publicUrlDescription('reports', 'http://analyzer.localhost:8080'),
      }),
      allowPrivateNetworks: z.boolean().default(false).meta({
        description:
          'Let the analyser fetch loopback, private, link-local and other non-public addresses (tests, local use).',
      }),
      fetchTimeout: duration
        .prefault('10s')
        .meta({ description: 'The longest a page fetch (all redirects included) may take.' }),
      maxRedirects: z.coerce
        .number()
        .int()
        .min(0)
        .max(20)
        .default(5)
        .meta({ description: "Redirects followed (each hop's address is checked again)." }),
      maxPageSize: byteSize.prefault('5mb').meta({ description: 'The largest page analysed.' }),
      analysisTimeout: duration
        .refine((d) => d >= 100, 'must be at least 100ms')
        .prefault('20s')
        .meta({
          description:
            'The longest the HTML analysis of one page may take (in a worker thread); then 422 "The page took too long to analyse."',
        }),
      analysisQueue: z.coerce.number().int().min(0).max(10_000).default(64).meta({
        description:
          'Analyses waiting for a worker thread; one more gets 503 "The analyser is busy. Please retry shortly."',
      }),
    })
    .prefault({})
    .meta({ description: 'The report analyser.' }),
  pages: z
    .strictObject({
      secretFile: z
        .string()
        .default('')
        .meta({
          description:
            'The file holding the secret that signs the cookies of the statistics and report pages (sign-in and unlocked ' +
            'password pages); created with a random secret when absent. Empty: pages-cookie.secret in dataDir.',
        }),
      sessionTtl: duration
        .refine((d) => d >= 60_000 && d <= 30 * 86_400_000, 'must be between 1m and 30d')
        .prefault('12h')
        .meta({ description: "How long an owner's sign-in (an API key entered at /_/login) lasts." }),
      unlockTtl: duration
        .refine((d) => d >= 60_000 && d <= 30 * 86_400_000, 'must be between 1m and 30d')
        .prefault('1h')
        .meta({ description: 'How long a password page stays open after its password was entered.' }),
      exports: z
        .strictObject({
          perAddress: z.coerce
            .number()
            .int()
            .min(0)
            .max(1000)
            .default(2)
            .meta({
              description:
                'CSV exports one client address (IPv6: its /64) may download at once in this process; one more gets 429 ' +
                'too_many_exports. 0: no bound.',
            }),
          total: z.coerce.number().int().min(0).max(10_000).default(8).meta({
            description:
              'CSV exports downloading at once in this process, from every address; one more gets 429 too_many_exports. 0: no bound.',
          }),
          stallTimeout: duration
            .refine((d) => d >= 100, 'must be at least 100ms')
            .prefault('30s')
            .meta({
              description:
                'An export whose client reads nothing for this long is cut (the connection closed) and its slot freed.',
            }),
        })
        .prefault({})
        .meta({
          description:
            'The CSV exports of the statistics pages: streamed in pages from the database, and bounded at once.',
        }),
    })
    .prefault({})
    .meta({ description: 'The statistics pages (websites host) and report pages (analyzer host).' }),
  bulksync: z
    .strictObject({
      bootstrapToken: z
        .string()
        .default('')
        .meta({ description: 'A "<id>|<secret>" workspace token ensured at start (revived if revoked).' }),
      bootstrapWorkspace: name
        .default('default')
        .meta({ description: 'The workspace of the bootstrap token (created if missing).' }),
    })
    .prefault({})
    .meta({ description: 'The bulk-sync service.' }),
  smtp: z
    .strictObject({
      host: z.string().default('').meta({
        description:
          'The SMTP server the e-mail reports are sent through. Empty: no e-mail; the reports are off (logged once at start).',
      }),
      port: port.default(587).meta({ description: 'The SMTP port (587 for STARTTLS, 465 for TLS).' }),
      tls: z
        .enum(['starttls', 'secure', 'none'])
        .default('starttls')
        .meta({
          description:
            'starttls: upgrade the connection with STARTTLS (required); secure: TLS from the first byte (port 465); ' +
            'none: plain text (a local relay only).',
        }),
      user: z.string().default('').meta({ description: 'The SMTP user; empty: no authentication.' }),
      password: z.string().default('').meta({
        description: 'The SMTP password; set it from the environment (${SMTP_PASSWORD}), never in the file.',
      }),
      from: z
        .string()
        .min(1)
        .default('tollgate <reports@localhost>')
        .meta({ description: 'The From address of the reports.' }),
    })
    .prefault({})
    .meta({ description: 'The SMTP server of the e-mail reports.' }),
  emailReports: z
    .strictObject({
      frequency: z.enum(['daily', 'weekly', 'monthly']).default('weekly').meta({
        description:
          'How often each website with e-mail reports on gets a summary of the past period (UTC): the day before, the week (Monday to Sunday) or the calendar month.',
      }),
      checkInterval: duration
        .refine((d) => d >= 1000, 'must be at least 1s')
        .prefault('5m')
        .meta({ description: 'How often a gateway process looks for reports due.' }),
      retries: z.coerce.number().int().min(0).max(10).default(3).meta({
        description: 'Further attempts of a failed send, each after a doubled delay.',
      }),
      retryDelay: duration.prefault('30s').meta({ description: 'The delay before the first retry.' }),
    })
    .prefault({})
    .meta({
      description:
        "Periodic e-mail reports of the websites' statistics to their owners. One gateway process (a lease in the database) sends them; each period is sent once per website.",
    }),
  widget: z
    .strictObject({
      sessionsPerWorkspace: bound.default(20_000).meta({
        description:
          'New visitor sessions (widget init) one workspace may start per budgetPeriod; one more gets 429 ' +
          'workspace_budget_exceeded. Counted in the database, so every process shares it. 0: no bound.',
      }),
      messagesPerWorkspace: bound.default(200_000).meta({
        description:
          "Visitor messages, events and leads one workspace's visitors may store per budgetPeriod; one more gets 429 " +
          'workspace_budget_exceeded. 0: no bound.',
      }),
      budgetPeriod: duration
        .refine((d) => d >= 1000, 'must be at least 1s')
        .prefault('1h')
        .meta({ description: 'The fixed window of the per-workspace budgets.' }),
    })
    .prefault({})
    .meta({
      description:
        "The widget's storage budgets per workspace (the gateway's limiters cannot see the workspace: it is in the body).",
    }),
  storage: z
    .strictObject({
      maxDistinctValues: positiveInt.default(1000).meta({
        description:
          'Distinct values the analytics collector stores per website, dimension (pages, referrers, …) and UTC day; ' +
          'a new value past it counts under "(other)".',
      }),
      recentVisits: duration
        .refine((d) => d >= 60_000, 'must be at least 1m')
        .prefault('30m')
        .meta({ description: 'How long the realtime view keeps a visit (then it is deleted).' }),
      widgetEvents: duration.prefault('90d').meta({
        description:
          'How long raw widget events are kept (then deleted, in bounded batches). 0: kept forever.',
      }),
      walCheckpointSize: byteSize.prefault('16mb').meta({
        description:
          "Past this size the database's write-ahead log is checkpointed and truncated (wal_checkpoint(TRUNCATE)).",
      }),
      housekeepingInterval: duration
        .refine((d) => d >= 1000, 'must be at least 1s')
        .prefault('1m')
        .meta({ description: 'How often the log size is checked and expired rows are deleted.' }),
    })
    .prefault({})
    .meta({ description: "Bounds on what the services' database keeps." }),
});
