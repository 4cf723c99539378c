import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiServerArgs, kubernetesServiceIp } from '../../dev/controlplane.ts';
import { claimNodeSlot, nodeSlotAddresses } from '../../dev/nodeSlot.ts';

const slotDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'skylift-slots-'));

describe('node slot addresses', () => {
  it('give each slot its own namespace, transfer net, Pod and Service CIDR', () => {
    expect(nodeSlotAddresses(0)).toEqual({
      index: 0,
      netns: 'skylift-0',
      hostVeth: 'skylift-h0',
      hostIp: '10.244.255.1',
      nodeIp: '10.244.255.2',
      podCidr: '10.244.0.0/24',
      serviceCidr: '10.96.0.0/24',
      cgroupRoot: '/skylift-0',
    });
    const last = nodeSlotAddresses(63);
    expect([last.hostIp, last.nodeIp, last.podCidr, last.serviceCidr, last.hostVeth]).toEqual([
      '10.244.255.253',
      '10.244.255.254',
      '10.244.63.0/24',
      '10.96.63.0/24',
      'skylift-h63',
    ]);
    // Interface names must fit IFNAMSIZ (15 characters).
    expect(last.hostVeth.length).toBeLessThanOrEqual(15);
    const all = Array.from({ length: 64 }, (_, i) => nodeSlotAddresses(i));
    expect(new Set(all.map((a) => a.hostIp)).size).toBe(64);
    expect(new Set(all.map((a) => a.serviceCidr)).size).toBe(64);
  });

  it('refuse an index outside 0..63', () => {
    expect(() => nodeSlotAddresses(64)).toThrow(/0\.\.63/);
    expect(() => nodeSlotAddresses(-1)).toThrow(/0\.\.63/);
    expect(() => nodeSlotAddresses(1.5)).toThrow(/0\.\.63/);
  });

  it('put the kubernetes Service on the first address of the Service CIDR', () => {
    expect(kubernetesServiceIp('10.96.7.0/24')).toBe('10.96.7.1');
    expect(kubernetesServiceIp('10.0.0.0/24')).toBe('10.0.0.1');
    expect(() => kubernetesServiceIp('10.96.7.0')).toThrow(/CIDR/);
    const pki = {
      serverCert: 'c',
      serverKey: 'k',
      caCert: 'ca',
      caKey: 'ck',
      caPem: '',
      saKey: 'sa',
      saPub: 'sp',
    };
    const args = apiServerArgs({
      port: 1,
      etcdUrl: 'http://e',
      pki,
      tokenFile: 't',
      certDir: 'd',
      serviceCidr: '10.96.7.0/24',
    });
    expect(args).toContain('--service-cluster-ip-range=10.96.7.0/24');
  });
});

describe('claimNodeSlot', () => {
  it('gives two live claimants different slots and frees a released one', async () => {
    const dir = await slotDir();
    const a = await claimNodeSlot('/run-a', dir);
    const b = await claimNodeSlot('/run-b', dir);
    expect([a.addresses.index, b.addresses.index]).toEqual([0, 1]);
    expect([a.staleDir, b.staleDir]).toEqual([undefined, undefined]);
    await a.release();
    await a.release();
    const c = await claimNodeSlot('/run-c', dir);
    expect(c.addresses.index).toBe(0);
    expect(c.staleDir).toBeUndefined();
  });

  it('takes over the slot of a dead owner and names its run directory', async () => {
    const dir = await slotDir();
    const child = spawn(process.execPath, ['-e', '0']);
    const pid = child.pid ?? 0;
    await once(child, 'exit');
    await writeFile(join(dir, '0.json'), JSON.stringify({ pid, started: '1', dir: '/old-run/node' }));
    const slot = await claimNodeSlot('/new-run/node', dir);
    expect(slot.addresses.index).toBe(0);
    expect(slot.staleDir).toBe('/old-run/node');
    expect(JSON.parse(await readFile(join(dir, '0.json'), 'utf8'))).toMatchObject({
      pid: process.pid,
      dir: '/new-run/node',
    });
  });

  it('takes a slot whose claim names a live pid with another start time (a recycled pid)', async () => {
    const dir = await slotDir();
    // This process is alive, but the claim's start time is not its own: a recycled pid.
    await writeFile(join(dir, '0.json'), JSON.stringify({ pid: process.pid, started: '1', dir: '/x' }));
    const recycled = await claimNodeSlot('/y', dir);
    expect(recycled.addresses.index).toBe(0);
    expect(recycled.staleDir).toBe('/x');
    // Its own claim, now live: the next claimant moves on.
    const next = await claimNodeSlot('/z', dir);
    expect(next.addresses.index).toBe(1);
  });

  it('treats a half-written claim as free, with nothing to sweep', async () => {
    const dir = await slotDir();
    await writeFile(join(dir, '0.json'), '{"pid": 12');
    const slot = await claimNodeSlot('/y', dir);
    expect(slot.addresses.index).toBe(0);
    expect(slot.staleDir).toBeUndefined();
  });

  it('release leaves a claim that is no longer its own', async () => {
    const dir = await slotDir();
    const a = await claimNodeSlot('/a', dir);
    await writeFile(join(dir, '0.json'), JSON.stringify({ pid: 1, started: '0', dir: '/other' }));
    await a.release();
    expect(JSON.parse(await readFile(join(dir, '0.json'), 'utf8'))).toMatchObject({ dir: '/other' });
  });
});
