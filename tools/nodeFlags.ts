/**
 * Node/V8 flags the operator process runs with wherever it is started: the
 * image's ENTRYPOINT, `make run` / `make dev`, `make bench`, `make chaos` and
 * the tests that run it as a process. Semi-spaces of 2 MiB instead of V8's
 * default (sized from the host's memory, tens of MiB on a large node) keep the
 * young generation small: peak RSS at 1,000 DNSRecords fell from about 615 to
 * 465 MiB at 4 MiB (docs/benchmarks.md), and from 123 to 117 MiB at 2 MiB
 * with the chart's heap limit, at about the same CPU (1 MiB cost 35 % more CPU).
 * test/e2e/image.test.ts keeps the Dockerfile and the Makefile in step.
 */
export const operatorNodeFlags: readonly string[] = ['--max-semi-space-size=2'];

/**
 * The V8 heap limit (MiB) the chart gives the operator (`heapLimitMiB`, as
 * `NODE_OPTIONS=--max-old-space-size=…`), and that `make bench` runs it with
 * unless told otherwise, so the report measures what the chart installs. A
 * heap limit well under the container's memory limit makes V8 collect garbage
 * before the kernel would kill the pod; on a large host without one, V8 lets
 * the heap grow to gigabytes of mostly garbage. test/integration/deploy.test.ts
 * keeps the chart in step.
 */
export const chartHeapLimitMiB = 192;
