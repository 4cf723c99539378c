import { KubeApiError, KubeResponseError, KubeUnreachableError } from '../runtime/kube/client.ts';
import { KubeconfigError, KubeCredentialError } from '../runtime/kube/kubeconfig.ts';
import { SettingsError } from '../runtime/settings.ts';

/**
 * What a command prints for an error that ended it, and its exit code: 2 for bad flags or
 * settings, 1 for anything else, with advice for an unreachable cluster. Pure: the caller writes
 * `message` to stderr. Shared by `skylift` and the workshop's own entry point (`dev/cli.ts`).
 */
export function describeFailure(err: unknown): { readonly message: string; readonly exitCode: 1 | 2 } {
  if (err instanceof SettingsError) return { message: `skylift: ${err.message}\n`, exitCode: 2 };
  if (err instanceof KubeApiError)
    return { message: `skylift: the Kubernetes API refused: ${err.message}\n`, exitCode: 1 };
  if (
    err instanceof KubeconfigError ||
    err instanceof KubeCredentialError ||
    err instanceof KubeResponseError
  )
    return { message: `skylift: ${err.message}\n`, exitCode: 1 };
  if (err instanceof KubeUnreachableError) {
    return {
      message: `skylift: ${err.message}: check --kubeconfig or KUBECONFIG, and that the cluster is up\n`,
      exitCode: 1,
    };
  }
  return {
    message: `skylift: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    exitCode: 1,
  };
}
