import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/**
 * Established TCP connections of a process to `port` (its Redis), read from /proc: the
 * process's socket inodes matched against the TCP table. Undefined without /proc.
 */
export function tcpConnectionsTo(pid: number, port: number): number | undefined {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        if (inode) inodes.add(inode);
      } catch {
        // closed since the listing
      }
    }
  } catch {
    return undefined;
  }
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let count = 0;
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st ... inode (field 9)
      const fields = line.trim().split(/\s+/);
      const [remote, state, inode] = [fields[2], fields[3], fields[9]];
      if (remote?.endsWith(hexPort) && state === '01' && inode && inodes.has(inode)) count++;
    }
  }
  return count;
}
