import { connect, createServer, type Server, type Socket } from 'node:net';

export type ProxyMode = 'pass' | 'reset';

/**
 * A TCP proxy on loopback. In front of the two ingress slots it is the load balancer
 * Telegram's webhook goes through (round robin per connection, skipping a backend that
 * refuses); in front of a receiver it is the network, which `reset` cuts: open
 * connections are reset and new ones are reset as soon as they are accepted.
 */
export class TcpProxy {
  mode: ProxyMode = 'pass';
  port = 0;
  connections = 0;
  private next = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  private constructor(private readonly backends: readonly number[]) {
    this.server = createServer((client) => this.accept(client));
  }

  static async start(backends: readonly number[], port = 0): Promise<TcpProxy> {
    const proxy = new TcpProxy(backends);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(port, '127.0.0.1', () => resolve());
    });
    const address = proxy.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    proxy.port = address.port;
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  setMode(mode: ProxyMode): void {
    this.mode = mode;
    if (mode === 'reset') for (const socket of this.sockets) socket.resetAndDestroy();
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.connections++;
    client.on('error', () => undefined);
    if (this.mode === 'reset') {
      client.resetAndDestroy();
      return;
    }
    this.sockets.add(client);
    client.once('close', () => this.sockets.delete(client));
    client.pause();
    this.connectUpstream(client, 0);
  }

  /** Tries each backend once, starting with the next in turn; resets the client if none answers. */
  private connectUpstream(client: Socket, tried: number): void {
    if (tried >= this.backends.length) {
      client.resetAndDestroy();
      return;
    }
    const port = this.backends[this.next++ % this.backends.length] as number;
    const upstream = connect(port, '127.0.0.1');
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      if (client.destroyed || this.mode === 'reset') {
        upstream.destroy();
        client.resetAndDestroy();
        return;
      }
      this.sockets.add(upstream);
      upstream.once('close', () => this.sockets.delete(upstream));
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.on('error', () => {
      if (!connected) {
        this.connectUpstream(client, tried + 1);
        return;
      }
      // The backend died mid-connection (kill -9): the client sees a reset, as it would
      // behind a real load balancer.
      client.resetAndDestroy();
    });
    upstream.once('close', () => {
      if (connected && !client.destroyed) client.end();
    });
    client.once('close', () => upstream.destroy());
  }
}
