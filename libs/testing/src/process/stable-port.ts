import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const taken = new Set<number>();

/** The first port the kernel hands out for outgoing connections and `listen(0)`. */
function ephemeralStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/);
    const start = Number(low);
    return Number.isInteger(start) && start > 12_000 ? start : 32_768;
  } catch {
    return 32_768;
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free loopback port below the ephemeral range, for a child process to listen on. A
 * port from `listen(0)` lies in the range every outgoing connection takes its local
 * port from: while the child boots, or between a kill and its restart, one of the
 * hundreds of connections to Redis may take it, and the child fails with EADDRINUSE.
 * Below the range, only another listener can.
 */
export async function stablePort(): Promise<number> {
  const top = ephemeralStart() - 1;
  const bottom = Math.max(10_000, top - 10_000);
  for (let i = 0; i < 200; i++) {
    const port = bottom + Math.floor(Math.random() * (top - bottom));
    if (taken.has(port)) continue;
    if (await bindable(port)) {
      taken.add(port);
      return port;
    }
  }
  throw new Error(`no free port between ${bottom} and ${top}`);
}
