import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of the emulator that counts the bytes going upstream, so a test
 * can see an upload reach "Telegram" while the client is still sending it.
 */
export class CountingProxy {
  bytesUp = 0;
  port = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  private constructor(targetPort: number) {
    this.server = createServer((client) => {
      const upstream = connect(targetPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('data', (chunk: Buffer) => {
        this.bytesUp += chunk.length;
      });
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  static async start(targetPort: number): Promise<CountingProxy> {
    const proxy = new CountingProxy(targetPort);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    const address = proxy.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    proxy.port = address.port;
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
