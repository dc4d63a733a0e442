# fleetjob: a hub that runs ClusterJobs across a fleet of Kubernetes clusters.

# Image used by docker-build, deploy and build-installer.
IMG ?= fleetjob-hub:dev

# VERSION is the release the binaries report (--version, kubectl fleetjob
# version) and the install manifests carry (label app.kubernetes.io/version
# on the hub's Deployment): `make build VERSION=v0.1.0`, `make release
# VERSION=v0.1.0`. Empty: the binaries describe themselves from the Go build
# info ("devel" and the commit) and the manifests say dev.
VERSION ?=
MANIFEST_VERSION := $(or $(VERSION),dev)
GO_LDFLAGS := -X github.com/fleetjob/fleetjob/pkg/version.version=$(VERSION)

# Kubernetes version of the control-plane binaries used by envtest and the
# local fleet. They are built from source by the tools module in
# hack/tools/k8s, whose go.mod must require k8s.io/kubernetes at this version.
K8S_VERSION ?= v1.36.3
K8S_VERSION_PARTS := $(subst ., ,$(patsubst v%,%,$(K8S_VERSION)))
K8S_MAJOR := $(word 1,$(K8S_VERSION_PARTS))
K8S_MINOR := $(word 2,$(K8S_VERSION_PARTS))

# Tool versions. Each tool is installed as bin/<tool>-<version> with a
# bin/<tool> symlink, so bumping a version reinstalls it.
CONTROLLER_TOOLS_VERSION ?= v0.21.0
# kustomize v5.8.3 requires go 1.27; v5.8.2 is the newest that builds with Go 1.26.
KUSTOMIZE_VERSION ?= v5.8.2
GOLANGCI_LINT_VERSION ?= v2.15.0
KWOK_VERSION ?= v0.8.0
KIND_VERSION ?= v0.33.0
# containerd of the kind node image (kubelet 1.36 targets containerd 2.x;
# Debian bookworm's is 1.6).
CONTAINERD_VERSION ?= v2.3.7

# How long the fuzz smoke run in `make test` fuzzes each target: a count of
# inputs (about 10 s on 2 idle cores), not a duration. A duration races the
# fuzzing coordinator's own deadline against a worker still running an
# input (golang/go#51484, #75804): on a loaded machine the run then fails
# "context deadline exceeded" with no failing input, as a cold CI run did
# here while the kind stage compiled in the background.
FUZZTIME ?= 100000x

# Where the race detector logs its reports in `make test`: summarized at
# the end of the run (hack/race-summary.sh), where CI's excerpt shows them.
RACE_LOGS ?= $(shell pwd)/artifacts/race

# Arguments passed to the hub by `make run`.
ARGS ?=

# CONTAINER_TOOL defines the container tool to be used for building images.
CONTAINER_TOOL ?= docker
KUBECTL ?= kubectl

# Setting SHELL to bash allows bash commands to be executed by recipes.
# Options are set to exit when a recipe line exits non-zero or a piped command fails.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

LOCALBIN := $(shell pwd)/bin
K8S_BIN := $(LOCALBIN)/k8s/$(K8S_VERSION)
# The Kubernetes commands built into $(K8S_BIN) (see Dependencies), defined
# here because rules above it name them as prerequisites, which make expands
# when it reads the rule.
K8S_CP_CMDS := kube-apiserver kube-controller-manager kube-scheduler kubectl
K8S_NODE_CMDS := kubelet kubeadm kube-proxy
K8S_CP_BINS := $(addprefix $(K8S_BIN)/,$(K8S_CP_CMDS))
K8S_NODE_BINS := $(addprefix $(K8S_BIN)/,$(K8S_NODE_CMDS))

CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
KIND ?= $(LOCALBIN)/kind-$(KIND_VERSION)
CONTAINERD_BIN := $(LOCALBIN)/containerd-$(CONTAINERD_VERSION)
# What hack/kind/ builds and caches: the pause binary, the root file system
# tarball, the privileged-container probe and node-image, the name of the
# node image to use. (bin/kind is this directory, not a link to kind.)
KIND_DIR := $(LOCALBIN)/kind

.PHONY: all
all: build

##@ General

# The help target prints out all targets with their descriptions organized
# beneath their categories. The categories are represented by '##@' and the
# target descriptions by '##'.

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate the CRD and RBAC manifests into config/.
	$(CONTROLLER_GEN) rbac:roleName=fleetjob-hub crd:generateEmbeddedObjectMeta=true paths="./..." output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac

.PHONY: generate
generate: controller-gen ## Generate DeepCopy code (zz_generated.deepcopy.go).
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./..."

.PHONY: fmt
fmt: ## Run go fmt against the code.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet against the code (including the e2e suite).
	go vet -tags e2e ./...

.PHONY: lint
lint: golangci-lint ## Run golangci-lint (includes gofmt) against the code.
	$(GOLANGCI_LINT) run ./...

.PHONY: lint-fix
lint-fix: golangci-lint ## Run golangci-lint and apply its fixes.
	$(GOLANGCI_LINT) run --fix ./...

# KIND_PREBUILD_LOG is where `make test` logs compiling what the kind stage
# needs, which it does in the background, at the lowest priority, while the
# envtest and kwok stages run: on a cold machine those compiles (kind,
# containerd, kubelet, kubeadm, kube-proxy, controller-gen for `make
# deploy`) are most of the kind stage's ~11 minutes of building, and the
# stages before it leave CPU idle while they wait on API servers. Only
# compiles run there: the node image is assembled by the Docker engine,
# which runs at normal priority whatever niceness its client has, and that
# I/O slowed the envtest suites' timing-bound specs enough to fail one; it
# is built in the kind stage. Only targets no earlier stage builds run in
# the background, so no file is built twice at once.
KIND_PREBUILD_LOG ?= $(shell pwd)/artifacts/kind-prebuild.log

.PHONY: test
test: ## Run every test: unit, a short fuzz run (FUZZTIME=100000x inputs), the envtest suites, the e2e suite on kwok, and on kind where Docker answers (E2E_KIND).
	$(MAKE) --no-print-directory envtest-bins kustomize k8s-bins build
	@prebuild=""; \
	if [ "$(E2E_KIND)" != off ] && $(CONTAINER_TOOL) info >/dev/null 2>&1; then \
		mkdir -p "$$(dirname $(KIND_PREBUILD_LOG))"; \
		echo "make test: compiling the kind stage's binaries in the background (log: $(KIND_PREBUILD_LOG))"; \
		setsid nice -n 19 $(MAKE) --no-print-directory kind $(if $(KIND_NODE_IMAGE),,kind-bins) controller-gen >$(KIND_PREBUILD_LOG) 2>&1 & prebuild=$$!; \
	fi; \
	$(MAKE) --no-print-directory test-envtest && $(MAKE) --no-print-directory e2e E2E_PROVIDER=kwok; rc=$$?; \
	if [ -n "$$prebuild" ]; then \
		if [ $$rc -ne 0 ]; then kill -- -$$prebuild 2>/dev/null; wait $$prebuild; exit $$rc; fi; \
		if ! wait $$prebuild; then \
			echo "make test: FAILED compiling the kind stage's binaries; the end of $(KIND_PREBUILD_LOG):" >&2; \
			tail -n 40 $(KIND_PREBUILD_LOG) >&2; exit 1; \
		fi; \
		echo "make test: the kind stage's binaries were compiled in the background"; \
	fi; \
	[ $$rc -eq 0 ] || exit $$rc; \
	$(MAKE) --no-print-directory test-e2e-kind

.PHONY: test-envtest
# kustomize: test/integration/install renders config/ as a release does.
# hack/test-race.sh is `go test -race ./...` with the hub envtest suite, the
# long pole, split over two processes.
test-envtest: envtest-bins kustomize ## Run the unit tests, the fuzz run and the envtest suites (no fleet).
	rm -rf $(RACE_LOGS) && mkdir -p $(RACE_LOGS)
	KUBEBUILDER_ASSETS="$(K8S_BIN)" GORACE="log_path=$(RACE_LOGS)/race" hack/test-race.sh; \
		rc=$$?; hack/race-summary.sh $(RACE_LOGS) && exit $$rc
	go test ./pkg/naming -run='^$$' -fuzz='^FuzzJobName$$' -fuzztime=$(FUZZTIME)
	go test ./pkg/naming -run='^$$' -fuzz='^FuzzMemberRunName$$' -fuzztime=$(FUZZTIME)

.PHONY: test-unit
test-unit: ## Run the tests that need no API server (all but test/integration).
	go test $$(go list ./... | grep -v /test/integration/) -count=1

.PHONY: verify
verify: manifests generate chart fmt ## Fail if generated files, formatting or go.mod are stale, then lint.
	@changes="$$(git status --porcelain -- api config charts ':(glob)**/zz_generated*')"; \
	if [ -n "$$changes" ]; then \
		echo "verify: generated files are out of date or uncommitted (run make manifests generate chart fmt):"; \
		echo "$$changes"; \
		git --no-pager diff --stat -- api config charts ':(glob)**/zz_generated*'; \
		exit 1; \
	fi
	@go mod tidy -diff || { echo "verify: go.mod or go.sum is not tidy (run go mod tidy)"; exit 1; }
	$(MAKE) lint

##@ Build

.PHONY: build
# CGO_ENABLED=0: static binaries, so that the same bin/fleetjob-hub runs on
# the host (kwok e2e, bench, demo) and FROM scratch in the hub image, and one
# compile serves both (a second build with other flags cost 12 minutes cold).
# VERSION only changes the link (-X), not the compiled packages.
build: ## Build the hub binary and the kubectl plugin (static) into bin/ (VERSION=v0.1.0 stamps them).
	CGO_ENABLED=0 go build -ldflags "$(GO_LDFLAGS)" -o $(LOCALBIN)/fleetjob-hub ./cmd/fleetjob-hub
	CGO_ENABLED=0 go build -ldflags "$(GO_LDFLAGS)" -o $(LOCALBIN)/kubectl-fleetjob ./cmd/kubectl-fleetjob

.PHONY: run
run: ## Run the hub from your host against the current kubeconfig (ARGS="...").
	go run ./cmd/fleetjob-hub $(ARGS)

.PHONY: docker-build
docker-build: ## Build the hub image (IMG=fleetjob-hub:dev, VERSION stamps it) where a registry is reachable.
	$(CONTAINER_TOOL) build --build-arg VERSION=$(VERSION) -t $(IMG) .

# The offline path of the hub image: the same static binary as the Dockerfile
# builds, packed FROM scratch by `docker import`, so nothing is pulled.
.PHONY: hub-image
hub-image: build ## Build the hub image (IMG=fleetjob-hub:dev, VERSION stamps it) without pulling anything.
	KIND_DIR=$(KIND_DIR) hack/kind/images.sh hub $(IMG) $(LOCALBIN)/fleetjob-hub

.PHONY: docker-push
docker-push: ## Push the hub image.
	$(CONTAINER_TOOL) push $(IMG)

.PHONY: build-installer
build-installer: manifests generate kustomize ## Write CRDs, RBAC, admission policies and the Deployment (IMG, VERSION) to dist/install.yaml.
	mkdir -p dist
	$(call kustomize-with-image) > dist/install.yaml

# PLATFORMS (os/arch) of the plugin's archives, HUB_PLATFORMS of the hub's
# binaries; RELEASE_URL is where the krew manifest says the archives are.
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
HUB_PLATFORMS ?= linux/amd64
RELEASE_URL ?= https://github.com/fleetjob/fleetjob/releases/download/$(VERSION)
# The release's image: IMG when given, else fleetjob-hub:VERSION.
RELEASE_IMG = $(if $(filter command line environment,$(origin IMG)),$(IMG),fleetjob-hub:$(VERSION))

.PHONY: release
release: controller-gen kustomize ## Write a release to dist/ (VERSION=v0.1.0): install.yaml, binaries, plugin archives, krew manifest, Helm chart, checksums.
	VERSION=$(VERSION) IMG=$(RELEASE_IMG) PLATFORMS="$(PLATFORMS)" HUB_PLATFORMS="$(HUB_PLATFORMS)" \
		RELEASE_URL=$(RELEASE_URL) KUSTOMIZE=$(KUSTOMIZE) MAKE="$(MAKE)" hack/release/release.sh

# The chart is generated from the same render as install.yaml (see
# hack/release/chart); test/integration/install proves the two equal.
.PHONY: chart
chart: kustomize ## Regenerate the Helm chart charts/fleetjob from config/.
	@sharded="$$(mktemp)"; trap 'rm -f "$$sharded"' EXIT; \
	KUSTOMIZE=$(KUSTOMIZE) hack/release/manifests.sh fleetjob-hub:dev dev sharded >"$$sharded" && \
	KUSTOMIZE=$(KUSTOMIZE) hack/release/manifests.sh fleetjob-hub:dev dev | go run ./hack/release/chart -version dev -sharded "$$sharded" -o charts/fleetjob

##@ Deployment

# kustomize-with-image prints config/default with the hub image IMG and the
# version label MANIFEST_VERSION, set on a copy of config/ in a temporary
# directory (hack/release/manifests.sh): deploying or building the installer
# never changes a tracked file.
define kustomize-with-image
KUSTOMIZE=$(KUSTOMIZE) hack/release/manifests.sh $(IMG) $(MANIFEST_VERSION)
endef

ifndef ignore-not-found
  ignore-not-found = false
endif

# Server-side apply is required: the ClusterJob CRD embeds a Job template and is
# about 700 KB, past the 256 KiB last-applied annotation of client-side apply.
.PHONY: install
install: manifests kustomize ## Install the CRDs into the cluster of the current kubeconfig, and wait until they are Established.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -
	$(KUSTOMIZE) build config/crd | $(KUBECTL) wait --for=condition=Established --timeout=60s -f -

.PHONY: uninstall
uninstall: manifests kustomize ## Uninstall the CRDs (ignore-not-found=true to ignore missing ones).
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

.PHONY: deploy
deploy: manifests kustomize ## Deploy the hub (CRDs, RBAC, Deployment) with image IMG.
	$(call kustomize-with-image) | $(KUBECTL) apply --server-side -f -

# The ClusterJobs go first, while the hub runs: their finalizers wait for
# the hub to clean up their members, and a hub deleted with them leaves them
# (and so the CRDs and their namespaces) Terminating for good.
UNDEPLOY_TIMEOUT ?= 15m

.PHONY: undeploy
undeploy: kustomize ## Undeploy the hub: the ClusterJobs first, waited for (UNDEPLOY_TIMEOUT), then the rest (ignore-not-found=true to ignore missing ones).
	@if $(KUBECTL) get crd clusterjobs.fleetjob.io >/dev/null 2>&1; then \
		echo "$(KUBECTL) delete clusterjobs --all --all-namespaces --timeout=$(UNDEPLOY_TIMEOUT)"; \
		$(KUBECTL) delete clusterjobs --all --all-namespaces --timeout=$(UNDEPLOY_TIMEOUT); \
	fi
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

##@ Fleet

# FLEET_PROVIDER: kwok (the default) or kind, only when asked for by name: a
# Docker engine that answers says nothing about whether kind can run.
# kwok needs the local binaries (make k8s-bins); kind needs what the Kind
# images section builds offline: kind, the node image (its name in
# bin/kind/node-image), the busybox images and the hub image IMG, which
# hack/fleet.sh deploys in the hub with `make deploy`. kind always runs
# through hack/kind/kind.sh, which adapts it to hosts that refuse
# privileged containers.
FLEET_ENV = K8S_VERSION=$(K8S_VERSION) K8S_BIN=$(K8S_BIN) KWOK_VERSION=$(KWOK_VERSION) \
	KIND=$(CURDIR)/hack/kind/kind.sh KIND_BINARY=$(KIND) KIND_VERSION=$(KIND_VERSION) KIND_DIR=$(KIND_DIR) \
	KIND_NODE_IMAGE="$$(cat $(KIND_DIR)/node-image 2>/dev/null)" HUB_IMG=$(IMG)

# fleet-deps builds what the fleet of provider $(1) needs.
define fleet-deps
if [ "$(1)" = kind ]; then $(MAKE) --no-print-directory kind kind-image kind-images; \
else $(MAKE) --no-print-directory k8s-bins; fi
endef

.PHONY: fleet-up
fleet-up: ## Create the local fleet: a hub and FLEET_MEMBERS member clusters (kubeconfigs in .fleet/; FLEET_PROVIDER=kind for kind).
	@provider="$$(hack/fleet.sh provider)"; \
	$(call fleet-deps,$$provider); \
	FLEET_PROVIDER="$$provider" $(FLEET_ENV) hack/fleet.sh up

.PHONY: fleet-down
fleet-down: ## Delete the local fleet and every process it started.
	$(FLEET_ENV) hack/fleet.sh down

.PHONY: fleet-status
fleet-status: ## List the clusters of the local fleet.
	$(FLEET_ENV) hack/fleet.sh status

.PHONY: fleet-smoke
fleet-smoke: ## Run a node-pinned Job on member-1 and check where it ran.
	$(FLEET_ENV) hack/fleet-smoke.sh

##@ Demo

.PHONY: demo
demo: build ## The main job: a local fleet, the hub controller, two registered members, a sample ClusterJob run to its end (FLEET_PROVIDER=kind for kind).
	@provider="$$(hack/fleet.sh provider)"; \
	$(call fleet-deps,$$provider); \
	FLEET_PROVIDER="$$provider" $(FLEET_ENV) hack/demo.sh up

.PHONY: demo-down
demo-down: ## Stop the demo's hub controller and delete the fleet.
	$(FLEET_ENV) hack/demo.sh down

##@ Kind images

# The kind fleet is built offline: only the Go module proxy and Debian's
# archive are needed, Docker pulls nothing. See hack/kind/image.sh.
KIND_ENV = K8S_VERSION=$(K8S_VERSION) K8S_BIN=$(K8S_BIN) CONTAINERD_BIN=$(CONTAINERD_BIN) \
	KIND=$(KIND) KIND_VERSION=$(KIND_VERSION) KIND_DIR=$(KIND_DIR)

.PHONY: kind-bins
kind-bins: $(KIND) $(CONTAINERD_BIN)/containerd $(K8S_CP_BINS) $(K8S_NODE_BINS) $(K8S_BIN)/etcd $(KIND_DIR)/pause ## Build kind, containerd, pause and every Kubernetes binary the node image needs.

# KIND_NODE_IMAGE names a node image to use instead (a published one where a
# registry is reachable): then nothing is built and only its name is written.
.PHONY: kind-image
kind-image: $(if $(KIND_NODE_IMAGE),,kind-bins) ## Build the kind node image offline (or use KIND_NODE_IMAGE); its name goes to bin/kind/node-image.
	$(KIND_ENV) KIND_NODE_IMAGE="$(KIND_NODE_IMAGE)" hack/kind/image.sh

.PHONY: kind-images
kind-images: hub-image ## Build the images the suite loads into kind: busybox (from Debian's busybox-static) and the hub (IMG).
	KIND_DIR=$(KIND_DIR) hack/kind/images.sh busybox

.PHONY: kind-image-clean
kind-image-clean: ## Remove the node images other than bin/kind/node-image's (no container may use them).
	$(KIND_ENV) hack/kind/image.sh clean

.PHONY: kind-smoke
kind-smoke: kind-image kind-images ## Create a one-node kind cluster from the node image, run a busybox pod to Succeeded, delete the cluster.
	$(KIND_ENV) KUBECTL=$(K8S_BIN)/kubectl hack/kind/smoke.sh

##@ E2E

# The e2e suite brings up its own fleet in E2E_FLEET_DIR (not .fleet/, so a
# fleet of `make fleet-up` or `make demo` is never deleted by it), runs
# ./e2e with the e2e build tag and always deletes that fleet at the end.
# `make e2e` runs it on kwok (E2E_PROVIDER=kind: on kind), `make e2e-kind`
# on kind, in E2E_KIND_FLEET_DIR, with kind cluster names of its own.
E2E_PROVIDER ?=
E2E_FLEET_DIR ?= /tmp/fleetjob-e2e
E2E_KIND_FLEET_DIR ?= /tmp/fleetjob-e2e-kind
# E2E_KIND is what `make test` does with the kind e2e: auto runs it where a
# Docker engine answers and says plainly that it skips it where none does;
# required (.ci/run) makes no Docker engine a failure; off skips it.
E2E_KIND ?= auto

.PHONY: e2e
e2e: build ## Run the e2e suite on a fresh kwok fleet (E2E_FOCUS=regexp, E2E_LABELS=label filter; E2E_PROVIDER=kind: make e2e-kind).
	@case "$(E2E_PROVIDER)" in \
	kind) $(MAKE) --no-print-directory e2e-kind ;; \
	""|kwok) $(MAKE) --no-print-directory k8s-bins && \
		E2E_PROVIDER=kwok FLEET_DIR="$(E2E_FLEET_DIR)" FLEETJOB_HUB="$(LOCALBIN)/fleetjob-hub" $(FLEET_ENV) e2e/run.sh ;; \
	*) echo "E2E_PROVIDER=$(E2E_PROVIDER): want kwok (the default) or kind" >&2; exit 2 ;; \
	esac

.PHONY: e2e-kind
e2e-kind: build kind kind-image kind-images ## Run the e2e suite on kind clusters built offline (needs Docker), the hub deployed in the hub with make deploy.
	E2E_PROVIDER=kind FLEET_DIR="$(E2E_KIND_FLEET_DIR)" $(FLEET_ENV) e2e/run.sh

# E2E_KIND_TEST_LABELS filters the specs of the kind stage of `make test`:
# those labelled hub-logic, decided by the hub alone, ran on kwok in the
# stage before (`make e2e-kind` runs every spec).
E2E_KIND_TEST_LABELS ?= !hub-logic

.PHONY: test-e2e-kind
test-e2e-kind: ## The kind e2e as `make test` runs it: where a Docker engine answers (E2E_KIND=auto|required|off).
	@case "$(E2E_KIND)" in \
	off) echo "make test: skipping the kind e2e (E2E_KIND=off)"; exit 0 ;; \
	auto|required) ;; \
	*) echo "E2E_KIND=$(E2E_KIND): want auto, required or off" >&2; exit 2 ;; \
	esac; \
	if $(CONTAINER_TOOL) info >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory e2e-kind E2E_LABELS='$(E2E_KIND_TEST_LABELS)'; \
	elif [ "$(E2E_KIND)" = required ]; then \
		echo "make test: FAILED: the kind e2e is required (E2E_KIND=required) but no Docker engine answers ($(CONTAINER_TOOL) info failed)" >&2; exit 1; \
	else \
		echo "make test: SKIPPING the kind e2e: no Docker engine answers ($(CONTAINER_TOOL) info failed); E2E_KIND=required makes this a failure"; \
	fi

##@ Benchmark

# The bench brings up its own kwok fleets in BENCH_FLEET_DIR (one after the
# other: 1 member, 5 members, 20 members), waits for any other kwok fleet
# on the machine to end first, and always deletes its fleet at the end. It
# is not part of `make test`: its numbers depend on the machine.
BENCH_ARGS ?=
BENCH_FLEET_DIR ?= /tmp/fleetjob-bench

.PHONY: bench
bench: build k8s-bins ## Measure fleetjob against the raw limit of a kwok fleet, P1-P6 (40-70 min; BENCH_ARGS="--phases p1,p3 ...").
	go run ./hack/bench --build=false --fleet-dir=$(BENCH_FLEET_DIR) $(BENCH_ARGS)

.PHONY: bench-smoke
bench-smoke: build k8s-bins ## A quick bench: P1 and P3 on 1 member x 100 nodes (a few minutes).
	go run ./hack/bench --build=false --fleet-dir=$(BENCH_FLEET_DIR) --smoke $(BENCH_ARGS)

##@ Dependencies

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

$(K8S_BIN):
	mkdir -p $(K8S_BIN)

# Every Kubernetes binary is built once, here, and used by envtest, the kwok
# fleet and the kind node image alike. They are linked static because the node
# image runs them FROM scratch (hack/kind/image.sh); cgo stays on and -trimpath
# off, exactly as before, so the compiled packages in the Go build cache are
# the same ones and only the link differs (the seven commands took 76 s after
# a dynamic build had filled the cache; with CGO_ENABLED=0 nothing is shared,
# 807 s). The host and the node are both Debian bookworm, so the static glibc
# matches the node's.
K8S_LDFLAGS := $(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,-X $(p).gitVersion=$(K8S_VERSION) -X $(p).gitMajor=$(K8S_MAJOR) -X $(p).gitMinor=$(K8S_MINOR))
# -s -w: no symbol table or DWARF, which a panic's stack trace does not need:
# each link takes half the time (kube-apiserver 21 s -> 11 s, warm cache) and
# the node image is smaller (kube-apiserver 148 MB -> 107 MB).
K8S_LINK_FLAGS := -s -w -linkmode external -extldflags -static
# The stamp names how the binaries in $(K8S_BIN) are linked. Binaries older
# than it (a directory filled before the static link, for one) are rebuilt, so
# a node image never receives a dynamically linked kube-apiserver.
K8S_LINK_STAMP := $(K8S_BIN)/.link-static

.PHONY: envtest-bins
envtest-bins: $(K8S_BIN)/kube-apiserver $(K8S_BIN)/etcd $(K8S_BIN)/kubectl ## Build what envtest needs (kube-apiserver, etcd, kubectl for the install test): tests do not wait for kwok.

.PHONY: k8s-bins
k8s-bins: $(K8S_CP_BINS) $(K8S_BIN)/etcd $(K8S_BIN)/kwok $(K8S_BIN)/kwokctl ## Build the missing control-plane, etcd and kwok binaries into bin/k8s/<version>.

.PHONY: k8s-node-bins
k8s-node-bins: $(K8S_NODE_BINS) ## Build kubelet, kubeadm and kube-proxy (for the kind node image) into bin/k8s/<version>.

$(K8S_LINK_STAMP): | $(K8S_BIN)
	touch $@

# One `go build` per group for the commands that are missing or older than the
# link stamp: they share most packages. Two groups, so envtest and the kwok
# fleet never wait for kubelet, kubeadm and kube-proxy.
$(K8S_CP_BINS) &: $(K8S_LINK_STAMP)
	$(call build-k8s,$(K8S_CP_CMDS))

$(K8S_NODE_BINS) &: $(K8S_LINK_STAMP)
	$(call build-k8s,$(K8S_NODE_CMDS))

# build-k8s builds those of the commands $(1) whose binary is missing or older
# than $(K8S_LINK_STAMP).
define build-k8s
@grep -q '^require k8s.io/kubernetes $(K8S_VERSION)$$' hack/tools/k8s/go.mod || \
	{ echo "hack/tools/k8s/go.mod does not require k8s.io/kubernetes $(K8S_VERSION)" >&2; exit 1; }
@pkgs=; for c in $(1); do \
	if [ ! -e "$(K8S_BIN)/$$c" ] || [ "$(K8S_BIN)/$$c" -ot "$(K8S_LINK_STAMP)" ]; then pkgs="$$pkgs k8s.io/kubernetes/cmd/$$c"; fi; \
done; \
if [ -n "$$pkgs" ]; then \
	echo "go build -ldflags \"$(K8S_LDFLAGS) $(K8S_LINK_FLAGS)\" -o $(K8S_BIN)/$$pkgs"; \
	cd hack/tools/k8s && go build -ldflags "$(K8S_LDFLAGS) $(K8S_LINK_FLAGS)" -o $(K8S_BIN)/ $$pkgs; \
fi; \
touch $(addprefix $(K8S_BIN)/,$(1))
endef

$(K8S_BIN)/etcd: $(K8S_LINK_STAMP)
	cd hack/tools/etcd && go build -ldflags "$(K8S_LINK_FLAGS)" -o $@ .

$(K8S_BIN)/kwok $(K8S_BIN)/kwokctl &: | $(K8S_BIN)
	GOBIN=$(K8S_BIN) go install \
		$(foreach c,$(notdir $(filter-out $(wildcard $(K8S_BIN)/kwok $(K8S_BIN)/kwokctl),$(K8S_BIN)/kwok $(K8S_BIN)/kwokctl)),sigs.k8s.io/kwok/cmd/$(c)@$(KWOK_VERSION))

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen into bin/.
$(CONTROLLER_GEN): | $(LOCALBIN)
	$(call go-install-tool,$(LOCALBIN)/controller-gen,sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Install kustomize into bin/.
$(KUSTOMIZE): | $(LOCALBIN)
	$(call go-install-tool,$(LOCALBIN)/kustomize,sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Install golangci-lint into bin/.
$(GOLANGCI_LINT): | $(LOCALBIN)
	$(call go-install-tool,$(LOCALBIN)/golangci-lint,github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

.PHONY: kind
kind: $(KIND) ## Install kind into bin/ (only used when FLEET_PROVIDER=kind).
# Not go-install-tool: its bin/kind link would take the place of bin/kind/.
$(KIND): | $(LOCALBIN)
	rm -rf $(LOCALBIN)/.kind-install
	GOBIN=$(LOCALBIN)/.kind-install go install sigs.k8s.io/kind@$(KIND_VERSION)
	mv $(LOCALBIN)/.kind-install/kind $@
	rmdir $(LOCALBIN)/.kind-install

# containerd, ctr and the runc shim for the node image: cgo off (nothing of
# theirs needs it) and without the snapshotters kind never selects.
$(CONTAINERD_BIN)/containerd: | $(LOCALBIN)
	CGO_ENABLED=0 GOBIN=$(CONTAINERD_BIN) go install -tags 'no_btrfs no_devmapper no_zfs no_aufs' \
		$(foreach c,containerd ctr containerd-shim-runc-v2,github.com/containerd/containerd/v2/cmd/$(c)@$(CONTAINERD_VERSION))

# An older `make kind` left a bin/kind link to the kind binary: replace it.
$(KIND_DIR)/pause: hack/kind/pause/main.go
	@if [ -L $(KIND_DIR) ]; then rm -f $(KIND_DIR); fi; mkdir -p $(KIND_DIR)
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o $@ ./hack/kind/pause

# go-install-tool will 'go install' any package with custom target and name of binary, if it doesn't exist
# $1 - target path with name of binary (without the version)
# $2 - package url which can be installed
# $3 - specific version of package
define go-install-tool
@set -e; \
package=$(2)@$(3); \
echo "Downloading $${package}"; \
rm -f "$(1)"; \
GOBIN="$(LOCALBIN)" go install "$${package}"; \
mv "$(LOCALBIN)/$$(basename "$(1)")" "$(1)-$(3)"; \
ln -sf "$$(basename "$(1)")-$(3)" "$(1)"
endef
