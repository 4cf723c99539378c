// Reading counters out of Prometheus text exposition (what the operator serves on /metrics).

/** One sample line: its labels and value. */
export interface PromSample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/**
 * The samples of metric `name` (exact name, no suffix matching) in
 * Prometheus text format. Comment lines and other metrics are skipped;
 * label values are unescaped (`\\`, `\"`, `\n`). Pure.
 */
export function samplesOf(text: string, name: string): PromSample[] {
  const out: PromSample[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    let valuePart: string;
    if (rest.startsWith('{')) {
      const close = rest.lastIndexOf('}');
      if (close < 0) continue;
      labels = parseLabels(rest.slice(1, close));
      valuePart = rest.slice(close + 1);
    } else if (rest.startsWith(' ')) {
      valuePart = rest;
    } else {
      continue; // another metric sharing the prefix, e.g. name_bucket
    }
    const value = Number(valuePart.trim().split(/\s+/)[0]);
    if (Number.isFinite(value)) out.push({ labels, value });
  }
  return out;
}

function parseLabels(body: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (const m of body.matchAll(re)) {
    labels[m[1] as string] = (m[2] as string).replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

/** HTTP verbs that change state in the Kubernetes API. */
export const kubeWriteVerbs: readonly string[] = ['POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Kubernetes API requests by verb from `skylift_kube_api_requests_total`
 * (all status codes summed). Pure.
 */
export function kubeRequestsByVerb(metricsText: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samplesOf(metricsText, 'skylift_kube_api_requests_total')) {
    const verb = s.labels.verb ?? 'unknown';
    out[verb] = (out[verb] ?? 0) + s.value;
  }
  return out;
}

/** Reconciles so far, all controllers and results summed (`controller_runtime_reconcile_total`). Pure. */
export function reconcileCount(metricsText: string): number {
  return samplesOf(metricsText, 'controller_runtime_reconcile_total').reduce((sum, s) => sum + s.value, 0);
}

/** AWS calls the operator counted for one account. */
export interface AccountCalls {
  /** `service:Operation` → calls, all outcomes. */
  readonly byOperation: Readonly<Record<string, number>>;
  /** Calls answered with throttling (outcome `throttled`). */
  readonly throttled: number;
}

/**
 * AWS calls by account (`own` for the operator's identity, else an assumed
 * role's 12-digit account) from `skylift_aws_api_calls_total`, each by
 * `service:Operation` with the outcomes summed, and the throttled ones. Pure.
 */
export function awsCallsByAccount(metricsText: string): Record<string, AccountCalls> {
  const out: Record<string, { byOperation: Record<string, number>; throttled: number }> = {};
  for (const s of samplesOf(metricsText, 'skylift_aws_api_calls_total')) {
    const account = s.labels.account ?? 'unknown';
    const entry = (out[account] ??= { byOperation: {}, throttled: 0 });
    const key = `${s.labels.service ?? 'unknown'}:${s.labels.operation ?? 'unknown'}`;
    entry.byOperation[key] = (entry.byOperation[key] ?? 0) + s.value;
    if (s.labels.outcome === 'throttled') entry.throttled += s.value;
  }
  return out;
}

/**
 * The calls per account made between two readings of {@link awsCallsByAccount}: accounts and
 * operations whose count grew (an account first seen in `after` counts from 0). Pure.
 */
export function accountCallsDelta(
  before: Readonly<Record<string, AccountCalls>>,
  after: Readonly<Record<string, AccountCalls>>,
): Record<string, AccountCalls> {
  const out: Record<string, AccountCalls> = {};
  for (const [account, now] of Object.entries(after)) {
    const then = before[account];
    const byOperation: Record<string, number> = {};
    for (const [op, n] of Object.entries(now.byOperation).sort(([a], [b]) => a.localeCompare(b))) {
      const d = n - (then?.byOperation[op] ?? 0);
      if (d > 0) byOperation[op] = d;
    }
    if (Object.keys(byOperation).length === 0) continue;
    out[account] = { byOperation, throttled: now.throttled - (then?.throttled ?? 0) };
  }
  return out;
}
