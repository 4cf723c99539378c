// The machine's kubectl, run against a kubeconfig: what the tests and the bench's rollout driver
// (bench/lib/rollouts.ts) drive a cluster with where kubectl's own behaviour is the point.
import { spawn } from 'node:child_process';

/** What a kubectl invocation printed and how it ended. */
export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the machine's kubectl with a kubeconfig and optional stdin. Never
 * rejects on a non-zero exit: tests assert on the result.
 */
export async function kubectl(
  kubeconfig: string,
  args: readonly string[],
  input?: string,
): Promise<KubectlResult> {
  return new Promise((resolveRun, reject) => {
    const child = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      resolveRun({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(input);
  });
}
