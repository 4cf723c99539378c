// SDK clients made on first use (src/providers/aws/lazyClient.ts, AwsClients.ec2): one client per
// set of AWS clients however many first calls race, adopted into the set (its rate limiter) and
// destroyed with it; a failed build is tried again; a build that outlives its set is destroyed.
import { afterEach, describe, expect, it } from 'vitest';
import { createAwsClients, type AwsClients } from '../../src/providers/aws/clients.ts';
import { LazyClient } from '../../src/providers/aws/lazyClient.ts';
import { Metrics } from '../../src/runtime/metrics.ts';
import { FakeClock } from '../support/fakeClock.ts';

/** A stand-in SDK client: counts the middlewares added to it and whether it was destroyed. */
class FakeSdkClient {
  readonly region: string;
  middlewares = 0;
  destroyed = false;
  readonly middlewareStack = {
    add: (): void => {
      this.middlewares++;
    },
  };

  constructor(region: string) {
    this.region = region;
  }

  destroy(): void {
    this.destroyed = true;
  }
}

/** A builder that counts its builds, can be held at a gate, and can be made to fail. */
function builder() {
  const built: FakeSdkClient[] = [];
  const state: { fail?: Error; gate?: Promise<void> } = {};
  let builds = 0;
  const build = async (config: { readonly region: string }): Promise<FakeSdkClient> => {
    builds++;
    if (state.gate !== undefined) await state.gate;
    if (state.fail !== undefined) throw state.fail;
    const c = new FakeSdkClient(config.region);
    built.push(c);
    return c;
  };
  return { build, built, state, builds: () => builds };
}

const made: AwsClients[] = [];
afterEach(() => {
  for (const c of made.splice(0)) c.destroy();
});

function clients(region = 'us-east-1'): AwsClients {
  const aws = createAwsClients({
    region,
    clock: new FakeClock(),
    metrics: new Metrics(),
    endpoint: 'http://127.0.0.1:1',
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  made.push(aws);
  return aws;
}

describe('LazyClient', () => {
  it('builds nothing until asked, then one client for concurrent first calls, adopted under its service', async () => {
    const b = builder();
    const lazy = new LazyClient('acm', b.build);
    const aws = clients();
    expect(b.builds()).toBe(0);
    expect(aws.limiters.has('acm')).toBe(false);
    const [one, two, three] = await Promise.all([lazy.of(aws), lazy.of(aws), lazy.of(aws)]);
    expect(b.builds()).toBe(1);
    expect(one).toBe(two);
    expect(two).toBe(three);
    expect(await lazy.of(aws)).toBe(one);
    expect(one.region).toBe('us-east-1');
    expect(one.middlewares).toBe(1);
    expect(aws.limiters.has('acm')).toBe(true);
  });

  it('builds one client per set of clients, each destroyed with its set', async () => {
    const b = builder();
    const lazy = new LazyClient('acm', b.build);
    const east = clients('us-east-1');
    const west = clients('eu-west-1');
    const [e, w] = await Promise.all([lazy.of(east), lazy.of(west)]);
    expect(e).not.toBe(w);
    expect([e.region, w.region]).toEqual(['us-east-1', 'eu-west-1']);
    east.destroy();
    expect(e.destroyed).toBe(true);
    expect(w.destroyed).toBe(false);
    west.destroy();
    expect(w.destroyed).toBe(true);
  });

  it('does not keep a failed build: the next call builds again', async () => {
    const b = builder();
    const lazy = new LazyClient('acm', b.build);
    const aws = clients();
    b.state.fail = new Error('cannot load the SDK');
    await expect(lazy.of(aws)).rejects.toThrow('cannot load the SDK');
    delete b.state.fail;
    const c = await lazy.of(aws);
    expect(b.builds()).toBe(2);
    expect(await lazy.of(aws)).toBe(c);
  });

  it('destroys a client whose build ends after its set was destroyed, and rejects', async () => {
    const b = builder();
    const lazy = new LazyClient('acm', b.build);
    const aws = clients();
    let open = (): void => undefined;
    b.state.gate = new Promise<void>((resolve) => (open = resolve));
    const pending = lazy.of(aws);
    aws.destroy();
    open();
    await expect(pending).rejects.toThrow(/destroyed/);
    expect(b.built).toHaveLength(1);
    expect(b.built[0]?.destroyed).toBe(true);
    await expect(lazy.of(aws)).rejects.toThrow(/destroyed/);
  });
});

describe('AwsClients.ec2', () => {
  it('is made on first use, once, with the set’s configuration and the ec2 rate limiter', async () => {
    const aws = clients('eu-west-1');
    expect(aws.limiters.has('ec2')).toBe(false);
    const [a, b] = await Promise.all([aws.ec2(), aws.ec2()]);
    expect(a).toBe(b);
    expect(await aws.ec2()).toBe(a);
    expect(await a.config.region()).toBe('eu-west-1');
    expect(aws.limiters.has('ec2')).toBe(true);
  });

  it('rejects once the set is destroyed, whether or not it was made before', async () => {
    const made = clients();
    await made.ec2();
    made.destroy();
    await expect(made.ec2()).rejects.toThrow(/destroyed: no ec2 client/);
    expect(made.destroyed).toBe(true);
    const never = clients();
    never.destroy();
    await expect(never.ec2()).rejects.toThrow(/destroyed: no ec2 client/);
  });
});
