/**
 * A loopback port for a process that is started next (tests, the bench, the chaos run).
 *
 * Picked below the kernel's ephemeral range: a port the kernel handed out for `listen(0)` and
 * that was released can be taken again by any outgoing connection before the child process
 * binds it ("address already in use"). Ports below
 * the range are only ever used by whoever asks for them by number.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';

const LOWEST = 20_000;
/**
 * Ports this process handed out: a port is free until its child binds it, so two calls before
 * that could pick the same one (seen: the fake API and the fake WooCommerce both given 20146).
 */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  const highest = Math.min(ephemeralLow() - 1, 65_535);
  if (highest - LOWEST >= 1_000) {
    for (let tries = 0; tries < 50; tries++) {
      const port = LOWEST + Math.floor(Math.random() * (highest - LOWEST + 1));
      if (handedOut.has(port) || !(await canBind(port))) continue;
      handedOut.add(port);
      return port;
    }
  }
  return kernelPort();
}

/** The first port of the kernel's ephemeral range (Linux); 32768 elsewhere, the common default. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
