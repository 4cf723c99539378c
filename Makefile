# Skylift — every target installs what it needs and is safe to repeat.
# Tools are cached outside the clone in $(SKYLIFT_CACHE) (see hack/lib.sh).

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# Node 24: the system node when it is 24, else the cached `node@24` npm package.
NODE_BIN_DIR := $(shell hack/install-node.sh --print)
export PATH := $(NODE_BIN_DIR):$(PATH)

NODE_STAMP := $(NODE_BIN_DIR)/node
DEPS_STAMP := node_modules/.package-lock.json

.PHONY: help
help: ## Show the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

.PHONY: setup
setup: setup-dev gateway-api helm promtool luahealth node-runtime argocd ## Install everything: Node 24, npm deps, kube binaries, moto venv, the Gateway API CRDs and conformance suite, Helm, promtool, luahealth, the node runtime, Argo CD.

# What the plain local stack needs (make dev without --node) and nothing more: the Gateway API
# conformance suite, Helm, promtool, luahealth and Argo CD are for the tests only.
.PHONY: setup-dev
setup-dev: node deps kube-bins moto gateway-api-crds

.PHONY: node
node: ## Install Node 24 if the system Node is older.
	@hack/install-node.sh >/dev/null

$(DEPS_STAMP): package.json package-lock.json | node
	@hack/install-deps.sh

.PHONY: deps
deps: $(DEPS_STAMP) ## npm ci (only when package-lock.json changed).

.PHONY: kube-bins
kube-bins: ## Build kube-apiserver, kube-controller-manager and etcd from the Go module proxy (cached).
	@hack/install-kube.sh >/dev/null

.PHONY: node-runtime
node-runtime: ## containerd, runc, CNI plugins, buildah (apt); kubelet, kube-proxy, kube-scheduler (Go proxy); pause and sample app images. For the node mode and the node tests.
	@hack/install-node-runtime.sh >/dev/null

.PHONY: helm
helm: ## Build the Helm CLI from the Go module proxy (cached), to render and test the chart.
	@hack/install-helm.sh >/dev/null

.PHONY: promtool
promtool: ## Unpack promtool from Debian's prometheus package (cached), to check the alerting rules.
	@hack/install-promtool.sh >/dev/null

.PHONY: luahealth
luahealth: ## Build hack/luahealth (Argo CD's Lua interpreter, cached), to test the Argo CD health checks.
	@hack/install-luahealth.sh >/dev/null

.PHONY: argocd
argocd: ## Build Argo CD's application controller and repo server (Go module proxy) and install Redis (Debian), cached, for the Argo CD end-to-end test.
	@hack/install-argocd.sh >/dev/null

.PHONY: gateway-api
gateway-api: ## The Gateway API (hack/versions.env): its standard-channel CRDs and its conformance suite, compiled, from the Go module proxy (cached).
	@hack/install-gateway-api.sh crds conformance >/dev/null

.PHONY: gateway-api-crds
gateway-api-crds: ## Only the Gateway API's standard-channel CRDs (cached), what make dev and make generate use.
	@hack/install-gateway-api.sh crds >/dev/null

.PHONY: moto
moto: ## Create the moto server venv (cached).
	@localstack/install-moto.sh >/dev/null

.PHONY: test
test: setup image ## Run unit, integration, end-to-end and node tests (kube-apiserver + etcd, moto, a real node).
	npx vitest run

.PHONY: test-unit
test-unit: node deps luahealth promtool gateway-api-crds ## Unit tests only (no control plane, no emulator).
	npx vitest run --project unit

.PHONY: lint
lint: node deps ## Type-check, ESLint and Prettier.
	npx tsc -p tsconfig.json --noEmit
	npx eslint .
	npx prettier --check .

.PHONY: format
format: node deps ## Rewrite files with Prettier.
	npx prettier --write .

.PHONY: build
build: node deps ## Compile TypeScript to dist/.
	npx tsc -p tsconfig.build.json

# A node's containerd to load the image into, e.g. make image CONTAINERD_ADDRESS=.skylift/node-proto/node/containerd/containerd.sock
CONTAINERD_ADDRESS ?=

.PHONY: image
image: ## Build the operator image with buildah on a locally made base (no Docker engine, no registry); CONTAINERD_ADDRESS=… loads it into a node.
	@hack/build-image.sh image $(if $(CONTAINERD_ADDRESS),load $(CONTAINERD_ADDRESS))

.PHONY: generate
generate: node deps helm gateway-api-crds ## Regenerate crds/, the chart's CRD and rules copies (Skylift's and the Gateway API's), docs/reference/ and the kustomize base.
	node tools/generate.ts
	node tools/renderKustomize.ts
	node tools/argocdHealth.ts

.PHONY: crds
crds: generate ## Same as make generate.

# Node/V8 flags of the operator process (tools/nodeFlags.ts; the Dockerfile's ENTRYPOINT has the same).
OPERATOR_NODE_FLAGS := --max-semi-space-size=2

# More `skylift dev` flags, e.g. make dev DEV_FLAGS='--no-samples' (see node dev/cli.ts --help).
DEV_FLAGS ?=

.PHONY: dev
dev: setup-dev $(if $(findstring --node,$(DEV_FLAGS)),node-runtime) ## skylift dev: local control plane, AWS emulator, the operator and the samples, until Ctrl-C (DEV_FLAGS=--node: with a real node).
	node $(OPERATOR_NODE_FLAGS) dev/cli.ts $(DEV_FLAGS)

.PHONY: run
run: node deps ## The operator alone, against `make dev DEV_FLAGS=--no-operator` running in another shell.
	@test -f .skylift/dev/kubeconfig || { echo "no .skylift/dev/kubeconfig: start make dev DEV_FLAGS=--no-operator first" >&2; exit 1; }
	@if test -f .skylift/dev/operator.in-process && kill -0 "$$(cat .skylift/dev/operator.in-process)" 2>/dev/null; then \
	  echo "make dev is running the operator already; restart it as make dev DEV_FLAGS=--no-operator to run it here" >&2; exit 1; fi
	set -a; source .skylift/dev/aws.env; set +a; \
	KUBECONFIG=.skylift/dev/kubeconfig node $(OPERATOR_NODE_FLAGS) src/cli/main.ts run --leader-elect=false --probe-address 127.0.0.1:8080 --log-format text

# More flags for the conformance run: its own --timeout (a Go duration, default 30m) and any flag of
# the suite, e.g. make conformance CONFORMANCE_FLAGS='--timeout 1h -run-test=HTTPRouteSimpleSameNamespace'.
CONFORMANCE_FLAGS ?=

.PHONY: conformance
conformance: setup-dev node-runtime gateway-api ## The Gateway API conformance suite (GATEWAY-HTTP) against Skylift on a local node cluster, as root; a passing run's report goes to conformance/reports/. Not in make test yet.
	node $(OPERATOR_NODE_FLAGS) dev/conformanceCli.ts $(CONFORMANCE_FLAGS)

# Flags for the benchmark, e.g. make bench BENCH_FLAGS='--only dns --sizes 100,1000' (see docs/benchmarks.md).
BENCH_FLAGS ?=

.PHONY: bench
bench: setup ## Measure convergence, AWS calls, API writes, memory and CPU; report in bench/results/.
	node bench/run.ts $(BENCH_FLAGS)

# Flags for the chaos run, e.g. make chaos CHAOS_FLAGS='--seed 1234 --resources 50' (see docs/benchmarks.md#chaos).
CHAOS_FLAGS ?=

.PHONY: chaos
chaos: setup ## Kill the operator, restart kube-apiserver, break AWS, kill the leader; check nothing leaks or duplicates.
	node bench/chaos.ts $(CHAOS_FLAGS)

.PHONY: clean
clean: ## Remove build output and local state (not the tool cache).
	rm -rf dist coverage .skylift
