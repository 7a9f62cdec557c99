/**
 * What Linux's /proc says about processes, for tests that check a PostgreSQL backend's behaviour
 * (the database runs on the same host in the tests and in CI).
 */
import fs from 'node:fs';

/** Minor page faults of a process so far (field 10 of /proc/PID/stat). */
export function pageFaults(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
}

/** The local ports of this process's TCP sockets: its file descriptors' socket inodes, looked up in /proc/net/tcp. */
export function ownTcpPorts(): number[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // A descriptor closed while listing.
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    if (!fs.existsSync(table)) continue;
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && inodes.has(cols[9])) ports.push(parseInt(cols[1].split(':')[1], 16));
    }
  }
  return ports;
}
