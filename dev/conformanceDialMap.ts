// The dial map: how the Gateway API conformance suite, run on the local stack, reaches a
// Gateway's load balancer. The suite sends its requests to the Gateway's `status.addresses[0]`
// (for Skylift, the ALB's DNS name) at the listener's port; moto's DNS names resolve nowhere, and
// the ALB data plane serves each listener on a loopback port of its own. The runner
// (dev/conformance.ts) writes this file whenever the data plane's listeners change; the suite's
// round tripper (hack/gatewayapi/conformance_test.go) reads it at every dial.
//
// The file, the contract between the two (JSON, version 1):
//   { "version": 1, "addresses": { "<dns name, lower case>:<listener port>": "<host>:<port>" } }
// Keys and values are in Go's net.JoinHostPort form (an IPv6 host in brackets).
import { rename, writeFile } from 'node:fs/promises';
import type { ServedListener } from './albDataPlane/dataPlane.ts';

/** The environment variable naming the dial map file, read by the conformance binary. */
export const dialMapEnv = 'SKYLIFT_CONFORMANCE_DIAL_MAP';

/** The dial map file's content (see the module comment). */
export interface DialMap {
  readonly version: 1;
  /** `dnsname:port` (lower case) → where the data plane serves that listener. */
  readonly addresses: Readonly<Record<string, string>>;
}

/** `host:port`, with an IPv6 host in brackets, as Go's net.JoinHostPort writes it. Pure. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * The dial map of the listeners a data plane serves: each load balancer's DNS name (lower case:
 * DNS names are case-insensitive, the binary lower-cases what it dials) and listener port, to
 * the listener's endpoint. Listeners without a DNS name are left out; when two listeners have
 * the same name and port (not possible in ELBv2), the first in the given order is kept. Keys are
 * sorted, so the same listeners always give the same file. Pure.
 */
export function dialMapOf(listeners: readonly ServedListener[]): DialMap {
  const entries = new Map<string, string>();
  for (const l of listeners) {
    if (l.dnsName === '') continue;
    const key = joinHostPort(l.dnsName.toLowerCase(), l.port);
    if (!entries.has(key)) entries.set(key, joinHostPort(l.endpoint.host, l.endpoint.port));
  }
  return {
    version: 1,
    addresses: Object.fromEntries([...entries].sort(([a], [b]) => a.localeCompare(b))),
  };
}

/**
 * Writes a dial map to `path` atomically (a temporary file beside it, then a rename), so a
 * reader sees either the old map or the new one, never a partial file.
 */
export async function writeDialMap(path: string, map: DialMap): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(map, null, 2)}\n`);
  await rename(tmp, path);
}

/**
 * A dial map file kept up to date with a data plane's listeners: pass {@link follow} as the data
 * plane's `onListenersChanged`. Writes happen one after the other in call order (the last call's
 * listeners win); a failed write is reported to `onError` and the next one is tried anyway.
 */
export interface DialMapFile {
  readonly path: string;
  /** Rewrites the file for these listeners (queued behind earlier writes). Never throws. */
  follow(listeners: readonly ServedListener[]): void;
  /** Resolves once every write asked for so far has been done (or has failed). */
  flushed(): Promise<void>;
}

/** Starts a dial map at `path` with no listeners (resolves once written) and keeps it up to date. */
export async function dialMapFile(path: string, onError: (err: unknown) => void): Promise<DialMapFile> {
  await writeDialMap(path, dialMapOf([]));
  let writes: Promise<void> = Promise.resolve();
  return {
    path,
    follow(listeners) {
      writes = writes.then(() => writeDialMap(path, dialMapOf(listeners))).catch(onError);
    },
    flushed: () => writes,
  };
}
