// Ports free right now on 127.0.0.1, for tests and benchmarks that start real processes.
//
// Chosen below the kernel's ephemeral range: a port handed out by `listen(0)` or used as the
// local end of an outgoing connection comes from that range, so a node that stops and starts
// again on its own port (a restart test) could find it taken by a client socket of another test
// meanwhile. Below the range only another test's explicit choice can clash, which callers retry.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const n = Number(low);
    return Number.isInteger(n) && n > 2048 ? n : 32768;
  } catch {
    return 32768;
  }
}

async function tryBind(port: number): Promise<Server | null> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** `count` distinct ports, all bound at once (so they differ and are free), then given back. */
export async function freePorts(count: number): Promise<number[]> {
  const high = ephemeralLow();
  const low = Math.max(1024, high - 20_000);
  const servers: Server[] = [];
  const ports: number[] = [];
  try {
    for (let tries = 0; ports.length < count; tries++) {
      if (tries > count * 50) throw new Error(`no ${count} free ports found between ${low} and ${high}`);
      const port = low + Math.floor(Math.random() * (high - low));
      if (ports.includes(port)) continue;
      const server = await tryBind(port);
      if (server === null) continue;
      servers.push(server);
      ports.push(port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}
