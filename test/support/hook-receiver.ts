import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request a receiver got. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A webhook receiver on loopback that records what it gets and answers as the test says. */
export interface HookReceiver {
  url: string;
  received: Received[];
  /** The status it answers with next (200 unless set); 0 drops the connection. */
  status: number;
  /** Events of every request answered 2xx, in arrival order, after their signatures were verified with `secret`. */
  verifiedEvents(secret: string): Record<string, unknown>[];
  close(): Promise<void>;
}

/** Starts a receiver at http://127.0.0.1:<free port>/hook, or at `port` when given (a receiver that comes back). */
export async function startReceiver(port = 0): Promise<HookReceiver> {
  const received: Received[] = [];
  const answered: { status: number; index: number }[] = [];
  const receiver: HookReceiver = {
    url: '',
    received,
    status: 200,
    verifiedEvents: (secret) => {
      const webhook = new Webhook(secret);
      return answered
        .filter((a) => a.status >= 200 && a.status < 300)
        .flatMap(({ index }) => {
          const { headers, body } = received[index]!;
          const payload = webhook.verify(body, headers as Record<string, string>) as {
            events: Record<string, unknown>[];
          };
          return payload.events;
        });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const index = received.push({ headers: req.headers, body: Buffer.concat(chunks).toString(), at: Date.now() }) - 1;
      const status = receiver.status;
      answered.push({ status, index });
      if (status === 0) req.socket.destroy();
      else res.writeHead(status).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}
