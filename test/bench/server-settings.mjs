/**
 * `--import ./test/bench/server-settings.mjs`: every HTTP server this process creates gets
 * the service's settings (src/start/start-service.ts: header size, timeouts, a
 * `clientError` listener), so the floor can be measured with them (paired-probe.ts,
 * FLOOR2_ENV).
 */
import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';

const createServer = http.createServer;
http.createServer = function (...args) {
  const listener = typeof args[0] === 'function' ? args[0] : args[1];
  const server = createServer.call(this, { maxHeaderSize: 16 * 1024 }, listener);
  server.on('clientError', (error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  return server;
};
// The floor imports createServer by name: its binding follows the change only after this.
syncBuiltinESMExports();
