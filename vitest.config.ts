import { defineConfig } from 'vitest/config';

/**
 * Every operator a test starts (in process or as `skylift run`, which inherits this) honours only
 * TeamPolicies labelled skylift.test/policies=<its own group>: a policy one test makes for its
 * namespaces never refuses another test's. A test of TeamPolicies passes its own selector.
 */
const testEnv = { SKYLIFT_TEAM_POLICY_SELECTOR: 'skylift.test/policies=none' };

export default defineConfig({
  test: {
    reporters: ['default'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'src/**/*.test.ts'],
          testTimeout: 10_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/globalSetup.ts'],
          env: testEnv,
          // One apiserver and one emulator are shared: files run one at a time.
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/support/globalSetup.ts'],
          env: testEnv,
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          // A real node (containerd, kubelet, Pods): needs root; see docs/development.md.
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          globalSetup: ['test/support/nodeGlobalSetup.ts'],
          env: testEnv,
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 300_000,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
