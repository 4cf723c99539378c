// The chart's memory settings, read from its values file, and what a measured
// RSS slope means against them. Pure.
import { parse } from 'yaml';
import type { ChartMemory } from '../report.ts';
import type { RssSlope } from './costPerObject.ts';

const binary: Readonly<Record<string, number>> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };
const decimal: Readonly<Record<string, number>> = { k: 1e3, M: 1e6, G: 1e9, T: 1e12 };

/** Bytes of a Kubernetes memory quantity (`320Mi`, `1G`, `268435456`), or null if it is not one. Pure. */
export function quantityBytes(q: unknown): number | null {
  if (typeof q === 'number') return Number.isFinite(q) && q >= 0 ? q : null;
  if (typeof q !== 'string') return null;
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q.trim());
  if (m === null) return null;
  const unit = m[2];
  const scale = unit === undefined ? 1 : (binary[unit] ?? decimal[unit] ?? 1);
  return Math.round(Number(m[1]) * scale);
}

/** `resources.requests.memory`, `resources.limits.memory` and `heapLimitMiB` of a chart values file. Pure. */
export function chartMemoryOf(valuesYaml: string): ChartMemory {
  const values = parse(valuesYaml) as {
    resources?: { requests?: { memory?: unknown }; limits?: { memory?: unknown } };
    heapLimitMiB?: unknown;
  } | null;
  const heap = values?.heapLimitMiB;
  return {
    requestBytes: quantityBytes(values?.resources?.requests?.memory),
    limitBytes: quantityBytes(values?.resources?.limits?.memory),
    heapLimitMiB: typeof heap === 'number' ? heap : null,
  };
}

/**
 * How many objects the line `slope` puts under `limitBytes` (whole objects), or null when there is
 * no slope, it does not grow, or no limit. An extrapolation: V8 grows its heap in steps. Pure.
 */
export function objectsWithin(limitBytes: number | null, slope: RssSlope): number | null {
  if (limitBytes === null || slope.bytesPerObject === null || slope.interceptBytes === null) return null;
  if (slope.bytesPerObject <= 0) return null;
  return Math.max(0, Math.floor((limitBytes - slope.interceptBytes) / slope.bytesPerObject));
}
