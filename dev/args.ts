// The flags of `skylift dev`: its own, and any `skylift run` flag, passed to the operator.
import { UsageError } from '../src/operator/options.ts';

/** What `skylift dev` was told. */
export interface DevArgs {
  /** An existing cluster; unset: start a local control plane. */
  readonly kubeconfig: string | undefined;
  /** An existing AWS-compatible endpoint; unset: start moto. */
  readonly awsEndpoint: string | undefined;
  /** Apply examples/app.yaml (default true). */
  readonly samples: boolean;
  /** Run the operator in this process (default true; false leaves it to `make run`). */
  readonly operator: boolean;
  /** Namespace for the samples (default `default`). */
  readonly namespace: string;
  /** Also apply examples/dev-teams.yaml: two teams in two AWS accounts under TeamPolicies. */
  readonly teams: boolean;
  /** Also run one real node (containerd, kubelet, kube-proxy): the sample app runs as Pods. Needs root. */
  readonly node: boolean;
  readonly help: boolean;
  /** Everything else, for the operator (`skylift run` flags). */
  readonly runArgs: readonly string[];
}

export const devUsage = `Usage: skylift dev [flags] [skylift run flags]

Starts a local Kubernetes control plane (kube-apiserver, etcd, kube-controller-manager)
and an AWS emulator (moto), unless given existing ones; installs the CRDs; creates a
hosted zone example.com and two subnets tagged kubernetes.io/role/elb=1 in the emulator;
runs the operator in this process; applies examples/app.yaml and prints every Ready/Synced
transition, then a summary, until Ctrl-C, which stops everything it started.
State, logs and the files below go to .skylift/dev/ (override with SKYLIFT_DEV_DIR).

  --kubeconfig PATH        use this cluster instead of starting one
  --aws-endpoint URL       use this AWS-compatible endpoint (moto, LocalStack) instead of starting moto
  --no-samples             do not apply examples/app.yaml
  --no-operator            do not run the operator here (run it yourself: make run)
  --teams                  also apply examples/dev-teams.yaml: two team namespaces, each with a
                           TeamPolicy in its own emulated AWS account, one record refused (docs/teams.md)
  --node                   also run one real node (containerd, kubelet, kube-proxy, kube-scheduler) in
                           its own network namespace; the sample app (examples/web.yaml) runs as Pods
                           and the load balancer's targets are their IPs. Needs root and
                           make node-runtime; not with --kubeconfig or --aws-endpoint
  -n, --namespace NS       namespace for the samples (default default; created if missing)
  -h, --help               show this text

Writes .skylift/dev/kubeconfig (admin) when it starts the control plane and
.skylift/dev/aws.env (to source) when it starts moto. Any other flag goes to the operator
(see skylift run --help); dev defaults: --leader-elect=false, --leader-election-namespace default
(where it records that it serves teams), --probe-address on a free loopback port, --log-format
text, --log-level warn, --rds-poll-interval 2s, --region us-east-1.
`;

/** Parses `skylift dev` flags; unknown ones are left for the operator. Pure. */
export function parseDevArgs(argv: readonly string[]): DevArgs {
  let kubeconfig: string | undefined;
  let awsEndpoint: string | undefined;
  let samples = true;
  let operator = true;
  let namespace = 'default';
  let teams = false;
  let node = false;
  let help = false;
  const runArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? '';
    const eq = word.indexOf('=');
    const flag = word.startsWith('--') && eq > 0 ? word.slice(0, eq) : word;
    const value = (): string => {
      if (flag !== word) return word.slice(eq + 1);
      const next = argv[++i];
      if (next === undefined || next === '') throw new UsageError(`${flag} needs a value`);
      return next;
    };
    switch (flag) {
      case '--kubeconfig':
        kubeconfig = value();
        break;
      case '--aws-endpoint':
        awsEndpoint = value();
        if (!/^https?:\/\/\S+$/.test(awsEndpoint))
          throw new UsageError(`--aws-endpoint: want an http(s) URL, got ${JSON.stringify(awsEndpoint)}`);
        break;
      case '--no-samples':
        samples = false;
        break;
      case '--no-operator':
        operator = false;
        break;
      case '--teams':
        teams = true;
        break;
      case '--node':
        node = true;
        break;
      case '-n':
      case '--namespace':
        namespace = value();
        if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace))
          throw new UsageError(`--namespace: not a namespace name: ${JSON.stringify(namespace)}`);
        break;
      case '-h':
      case '--help':
        help = true;
        break;
      default:
        runArgs.push(word);
    }
  }
  if (node && (kubeconfig !== undefined || awsEndpoint !== undefined))
    throw new UsageError(
      '--node starts its own cluster and moto: leave out --kubeconfig and --aws-endpoint, or leave out --node',
    );
  return { kubeconfig, awsEndpoint, samples, operator, namespace, teams, node, help, runArgs };
}
