// The conformance dial map (dev/conformanceDialMap.ts): from the ALB data plane's listeners to
// the file the conformance binary's round tripper reads, and that both sides agree on its shape.
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ServedListener } from '../../dev/albDataPlane/dataPlane.ts';
import {
  dialMapEnv,
  dialMapFile,
  dialMapOf,
  joinHostPort,
  writeDialMap,
} from '../../dev/conformanceDialMap.ts';
import { repoRoot } from '../../dev/paths.ts';

const listener = (dnsName: string, port: number, host: string, at: number): ServedListener => ({
  loadBalancerArn: `arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/${dnsName.split('.')[0] ?? ''}/0`,
  dnsName,
  port,
  protocol: 'HTTP',
  endpoint: { host, port: at },
});

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('dialMapOf', () => {
  it('maps each load balancer DNS name and listener port to where the data plane serves it', () => {
    const map = dialMapOf([
      listener('sky-b-1.us-east-1.elb.amazonaws.com', 80, '127.0.0.1', 41000),
      listener('sky-a-1.us-east-1.elb.amazonaws.com', 8080, '127.0.0.1', 41002),
      listener('sky-a-1.us-east-1.elb.amazonaws.com', 80, '127.0.0.1', 41001),
    ]);
    expect(map).toEqual({
      version: 1,
      addresses: {
        'sky-a-1.us-east-1.elb.amazonaws.com:80': '127.0.0.1:41001',
        'sky-a-1.us-east-1.elb.amazonaws.com:8080': '127.0.0.1:41002',
        'sky-b-1.us-east-1.elb.amazonaws.com:80': '127.0.0.1:41000',
      },
    });
    // Sorted keys: the same listeners in any order give the same file.
    expect(Object.keys(map.addresses)).toEqual([...Object.keys(map.addresses)].sort());
  });

  it('lower-cases DNS names, brackets IPv6 endpoints, skips listeners without a name, keeps the first duplicate', () => {
    const map = dialMapOf([
      listener('Sky-C-1.US-EAST-1.elb.amazonaws.com', 80, '::1', 42000),
      listener('', 80, '127.0.0.1', 42001),
      listener('sky-c-1.us-east-1.elb.amazonaws.com', 80, '127.0.0.1', 42002),
    ]);
    expect(map.addresses).toEqual({ 'sky-c-1.us-east-1.elb.amazonaws.com:80': '[::1]:42000' });
  });

  it('is empty without listeners', () => {
    expect(dialMapOf([])).toEqual({ version: 1, addresses: {} });
  });
});

describe('dialMapFile', () => {
  it('starts empty, ends with the last listeners it was given, and goes on after a failed write', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skylift-dialmap-'));
    dirs.push(dir);
    const errors: unknown[] = [];
    const file = await dialMapFile(join(dir, 'dial-map.json'), (err) => errors.push(err));
    const read = async (): Promise<unknown> => JSON.parse(await readFile(file.path, 'utf8'));
    expect(await read()).toEqual({ version: 1, addresses: {} });

    const a = listener('sky-a-1.us-east-1.elb.amazonaws.com', 80, '127.0.0.1', 41001);
    const b = listener('sky-b-1.us-east-1.elb.amazonaws.com', 80, '127.0.0.1', 41002);
    file.follow([a]);
    file.follow([a, b]);
    await file.flushed();
    expect(await read()).toEqual(dialMapOf([a, b]));

    // The directory gone: that write fails and is reported; once it is back, the next one lands.
    await rm(dir, { recursive: true });
    file.follow([a]);
    await file.flushed();
    expect(errors).toHaveLength(1);
    await mkdir(dir);
    file.follow([b]);
    await file.flushed();
    expect(await read()).toEqual(dialMapOf([b]));
    expect(errors).toHaveLength(1);
  });
});

describe('joinHostPort', () => {
  it('writes host:port as Go does', () => {
    expect(joinHostPort('127.0.0.1', 80)).toBe('127.0.0.1:80');
    expect(joinHostPort('fd00::1', 443)).toBe('[fd00::1]:443');
  });
});

describe('writeDialMap', () => {
  it('replaces the file whole and leaves no temporary file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skylift-dialmap-'));
    dirs.push(dir);
    const path = join(dir, 'dial-map.json');
    await writeDialMap(path, dialMapOf([listener('x-1.elb.amazonaws.com', 80, '127.0.0.1', 1)]));
    await writeDialMap(path, dialMapOf([listener('y-1.elb.amazonaws.com', 80, '127.0.0.1', 2)]));
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
      version: 1,
      addresses: { 'y-1.elb.amazonaws.com:80': '127.0.0.1:2' },
    });
    expect(await readdir(dir)).toEqual(['dial-map.json']);
  });
});

describe('the conformance binary side (hack/gatewayapi/conformance_test.go)', () => {
  it('reads the same environment variable and JSON fields', async () => {
    const go = await readFile(join(repoRoot, 'hack', 'gatewayapi', 'conformance_test.go'), 'utf8');
    expect(go).toContain(`"${dialMapEnv}"`);
    expect(go).toContain('`json:"version"`');
    expect(go).toContain('`json:"addresses"`');
    expect(go).toContain('CustomDialContext');
  });
});
