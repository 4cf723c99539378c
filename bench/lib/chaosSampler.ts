// The chaos run's view of the apiserver while kube-apiserver itself is being
// restarted: writes that retry until it is back, and a once-a-second sample of
// every Skylift object that just skips a beat when it is away.
import { setTimeout as delay } from 'node:timers/promises';
import { waitFor } from '../../dev/wait.ts';
import { KubeApiError, type KubeClient } from '../../src/runtime/kube/client.ts';
import { listCrStates } from './crStates.ts';
import type { CrState } from './invariants.ts';

/**
 * Runs a Kubernetes write until it goes through, for up to a minute (the
 * apiserver may be restarting). 409 and 404 count as done: a create or
 * delete whose answer was lost in the restart already happened.
 */
export async function kubeWrite(what: string, write: () => Promise<unknown>): Promise<void> {
  await waitFor(
    async () => {
      try {
        await write();
      } catch (err) {
        if (err instanceof KubeApiError && (err.statusCode === 409 || err.statusCode === 404)) return true;
        throw err;
      }
      return true;
    },
    { timeoutMs: 60_000, intervalMs: 250, description: what },
  );
}

/** The key the sampler uses for an object: kind, namespace and name. Pure. */
export function crKey(cr: { kind: string; namespace: string; name: string }): string {
  return `${cr.kind} ${cr.namespace}/${cr.name}`;
}

/**
 * Lists the Skylift objects of the namespaces once a second until stopped,
 * keeping the latest list and when each object (by {@link crKey}) was first
 * seen Ready, in the caller's clock. A failed LIST is a missed sample.
 */
export class ReadySampler {
  /** The last successful sample. */
  latest: CrState[] = [];
  readonly firstReady = new Map<string, number>();
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(client: KubeClient, namespaces: readonly string[], now: () => number) {
    this.loop = (async () => {
      while (!this.stopped) {
        try {
          this.latest = await listCrStates(client, namespaces);
          const at = now();
          for (const cr of this.latest)
            if (cr.ready && !this.firstReady.has(crKey(cr))) this.firstReady.set(crKey(cr), at);
        } catch {
          // kube-apiserver is restarting: the next tick tries again
        }
        await delay(1000);
      }
    })();
  }

  /** True when the last sample holds exactly `keys` and all of them are Ready. */
  allReady(keys: readonly string[]): boolean {
    const want = new Set(keys);
    return this.latest.length === want.size && this.latest.every((cr) => cr.ready && want.has(crKey(cr)));
  }

  /** Stops sampling and waits for the last sample to finish. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}
