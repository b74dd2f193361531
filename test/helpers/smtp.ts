import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message the test SMTP server accepted. */
export interface Received {
  readonly from: string;
  readonly to: string[];
  /** The raw message (headers and body). */
  readonly raw: string;
}

export interface TestSmtp {
  readonly port: number;
  readonly received: Received[];
  /** How many messages (DATA commands) were answered, accepted or refused. */
  attempts: number;
  /** Refuse this many next messages with 451. */
  refuseNext: number;
  /** Resolves at the next accepted message. */
  nextMessage(): Promise<Received>;
  close(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1 (any free port), plain text, no authentication: what it accepts is kept. */
export async function startSmtp(): Promise<TestSmtp> {
  const waiting: ((message: Received) => void)[] = [];
  const state: TestSmtp = {
    port: 0,
    received: [],
    attempts: 0,
    refuseNext: 0,
    nextMessage: () => new Promise((resolve) => waiting.push(resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        state.attempts++;
        if (state.refuseNext > 0) {
          state.refuseNext--;
          const err = Object.assign(new Error('Try again later'), { responseCode: 451 });
          callback(err);
          return;
        }
        const message: Received = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        };
        state.received.push(message);
        callback();
        waiting.splice(0).forEach((resolve) => resolve(message));
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  return Object.assign(state, { port: (server.server.address() as AddressInfo).port });
}
