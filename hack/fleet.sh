#!/usr/bin/env bash
# Copyright 2026 The fleetjob Authors.
# SPDX-License-Identifier: Apache-2.0
#
# fleet.sh runs a local fleet: one hub cluster and FLEET_MEMBERS member
# clusters, named hub, member-1, member-2, ...
#
#   hack/fleet.sh up        create (or restart) the fleet; safe to run twice
#   hack/fleet.sh down      delete every cluster and every process of the fleet
#   hack/fleet.sh status    list the clusters, their API servers and nodes
#   hack/fleet.sh provider  print the provider that `up` would use
#   hack/fleet.sh routes    kind: set the routes between nodes again (after a
#                           node container restarted or a Node re-registered)
#
# Providers (FLEET_PROVIDER):
#   kwok  real kube-apiserver/etcd/controller-manager/scheduler run as local
#         processes (kwokctl --runtime binary) from K8S_BIN; members get fake
#         nodes that kwok keeps Ready and whose pods kwok runs to completion.
#   kind  kind clusters from an offline node image (needs a Docker engine and
#         `make kind-image`): the hub a single node, each member a control
#         plane (untainted: it runs Jobs too) and FLEET_KIND_WORKERS workers;
#         no kindnetd, no CoreDNS (fleet.sh routes pod CIDRs between nodes);
#         busybox images loaded into the members; with HUB_IMG, the hub
#         controller loaded and deployed with `make deploy`.
# The default is kwok, always: a Docker engine that answers says nothing about
# whether kind can run here (no registry, no privileged containers on the
# project's machines), so kind is used only when asked for by name.
#
# Each cluster's kubeconfig is written to $FLEET_DIR/<name>.kubeconfig with a
# single context named <name> and embedded credentials.
#
# Environment (defaults in brackets):
#   FLEET_MEMBERS       number of member clusters [2]
#   FLEET_NODES         fake nodes per member, space separated; the last value
#                       repeats for further members ["6 9"] (kwok only)
#   FLEET_ZONES         values of topology.kubernetes.io/zone, round robin ["zone-a zone-b zone-c"]
#   FLEET_POOLS         values of fleetjob.io/pool, round robin ["pool-1 pool-2"]
#   FLEET_KWOK_CRDS     kwok CRDs to enable, comma separated, e.g. "Stage" [""].
#                       Empty: kwok's built-in stages keep nodes Ready and run
#                       pods to Succeeded after 1-5s. "Stage": kwok only does
#                       what Stage objects say; fleet.sh applies kwok's default
#                       node and pod stages, and tests may add their own (for
#                       example a Stage failing pods on a chosen node).
#                       "Logs", "ClusterLogs": kwok serves pods' logs from the
#                       files such objects name (e2e: "Stage,Logs,ClusterLogs").
#   FLEET_KWOK_EXTRA_ARGS  extra component flags for kwokctl, space separated
#                       component=key=value, e.g. "kube-controller-manager=leader-elect=false"
#                       [""]. On a loaded machine a member's controller-manager
#                       or scheduler that misses a lease renewal exits for good
#                       (kwokctl does not restart it); without leader election
#                       it keeps going. (make bench sets both.)
#   FLEET_API_TIMEOUT   seconds a new cluster's API server and ServiceAccount
#                       controller have to serve [120]; a loaded 2-core
#                       machine needed more than 60 s for the 20th member of
#                       a fleet of 20 × 100 nodes
#   FLEET_DIR           state directory [<repo>/.fleet]
#   K8S_VERSION         Kubernetes version of the binaries [v1.36.3]
#   K8S_BIN             directory with kube-*, kubectl, etcd, kwok, kwokctl
#                       [<repo>/bin/k8s/$K8S_VERSION]; see `make k8s-bins`
#   KWOK_VERSION        kwok module version, for its stage manifests [v0.8.0]
#   KIND                kind binary [kind] (on hosts refusing privileged
#                       containers, the wrapper `make kind` points at)
#   KIND_NODE_IMAGE     the kind node image (required for kind; make sets it)
#   FLEET_KIND_WORKERS  workers per kind member, the last value repeating ["2 1"]
#   FLEET_KIND_PREFIX   prefix of the kind cluster names [fleetjob-]: the
#                       e2e fleet uses its own, so that it never touches
#                       the fleet of `make fleet-up`
#   KIND_JOB_IMAGES     images loaded into every kind member [the busybox
#                       images the samples and the suite use]
#   HUB_IMG             kind: the hub controller image to deploy in the hub [none]
#   KUBECTL             kubectl binary [$K8S_BIN/kubectl, else kubectl on PATH]

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
K8S_VERSION="${K8S_VERSION:-v1.36.3}"
K8S_BIN="${K8S_BIN:-${ROOT}/bin/k8s/${K8S_VERSION}}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
FLEET_DIR="${FLEET_DIR:-${ROOT}/.fleet}"
FLEET_MEMBERS="${FLEET_MEMBERS:-2}"
FLEET_NODES="${FLEET_NODES:-6 9}"
FLEET_ZONES="${FLEET_ZONES:-zone-a zone-b zone-c}"
FLEET_POOLS="${FLEET_POOLS:-pool-1 pool-2}"
FLEET_KWOK_CRDS="${FLEET_KWOK_CRDS:-}"
FLEET_KWOK_EXTRA_ARGS="${FLEET_KWOK_EXTRA_ARGS:-}"
FLEET_API_TIMEOUT="${FLEET_API_TIMEOUT:-120}"
KIND="${KIND:-kind}"
KIND_NODE_IMAGE="${KIND_NODE_IMAGE:-}"
KWOK_WORKDIR="${FLEET_DIR}/kwok"
PROVIDER_FILE="${FLEET_DIR}/provider"
CLUSTERS_FILE="${FLEET_DIR}/clusters"

if [[ -z "${KUBECTL:-}" ]]; then
  if [[ -x "${K8S_BIN}/kubectl" ]]; then
    KUBECTL="${K8S_BIN}/kubectl"
  else
    KUBECTL=kubectl
  fi
fi

log() { printf '[fleet] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

cluster_names() {
  local i
  echo hub
  for ((i = 1; i <= FLEET_MEMBERS; i++)); do
    echo "member-${i}"
  done
}

# nodes_for <member index>: the node count of that member (the last value of
# FLEET_NODES repeats).
nodes_for() {
  local -a counts
  read -r -a counts <<<"${FLEET_NODES}"
  local idx=$(($1 - 1))
  if ((idx >= ${#counts[@]})); then
    idx=$((${#counts[@]} - 1))
  fi
  echo "${counts[$idx]}"
}

detect_provider() {
  case "${FLEET_PROVIDER:-kwok}" in
    kwok | kind) echo "${FLEET_PROVIDER:-kwok}" ;;
    *) die "FLEET_PROVIDER=${FLEET_PROVIDER}: want kwok (the default) or kind" ;;
  esac
}

# Clusters of the existing fleet (as recorded by `up`), else the configured ones.
fleet_clusters() {
  if [[ -s "${CLUSTERS_FILE}" ]]; then
    cat "${CLUSTERS_FILE}"
  else
    cluster_names
  fi
}

kubeconfig_of() { echo "${FLEET_DIR}/$1.kubeconfig"; }

k() { # k <cluster> kubectl-args...
  local name="$1"
  shift
  "${KUBECTL}" --kubeconfig "$(kubeconfig_of "${name}")" "$@"
}

# create_nodes <cluster> <member index> <count>: the member's fake nodes,
# m<index>-node-01 and on, created in parallel by hack/nodes (their shape:
# hack/nodes/node.go), which returns once kwok reports them all Ready. Zone
# and pool are assigned round robin, so every (zone, pool) pair and groups
# of different sizes exist. A `kubectl apply` of generated YAML took 11
# minutes for 5 members of 1,000 nodes; this takes seconds. CGO_ENABLED=0,
# as `make build` compiles: the client-go packages they share are compiled
# once (with cgo on, a cold machine compiled them again: 75 s of `make e2e`).
create_nodes() {
  local name="$1" m="$2" count="$3"
  (cd "${ROOT}" && CGO_ENABLED=0 go run ./hack/nodes --kubeconfig "$(kubeconfig_of "${name}")" \
    --member "${m}" --count "${count}" --zones "${FLEET_ZONES}" --pools "${FLEET_POOLS}") 9>&-
}

# write_kubeconfig <name> <source kubeconfig> <source context>: flatten into
# $FLEET_DIR/<name>.kubeconfig with one context called <name>.
write_kubeconfig() {
  local name="$1" src="$2" ctx="$3" out tmp
  out="$(kubeconfig_of "${name}")"
  tmp="${out}.tmp"
  "${KUBECTL}" --kubeconfig "${src}" config view --raw --flatten --minify --context "${ctx}" >"${tmp}"
  if [[ "${ctx}" != "${name}" ]]; then
    "${KUBECTL}" --kubeconfig "${tmp}" config rename-context "${ctx}" "${name}" >/dev/null
  fi
  chmod 600 "${tmp}"
  mv "${tmp}" "${out}"
}

wait_api() { # wait_api <cluster>: until the default ServiceAccount exists (pods can be created).
  local name="$1" deadline=$((SECONDS + FLEET_API_TIMEOUT))
  while ((SECONDS < deadline)); do
    if k "${name}" get serviceaccount default -n default --request-timeout=5s >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.5
  done
  # Under load a kwok member's kube-controller-manager gives up waiting for
  # its API server's health and exits, and kwokctl does not restart it.
  die "cluster ${name}: API server or ServiceAccount controller not ready after ${FLEET_API_TIMEOUT}s (FLEET_API_TIMEOUT); if kwok, see ${KWOK_WORKDIR}/clusters/${name}/logs/kube-controller-manager.log"
}

# ---------------------------------------------------------------- kwok

kwok_env() {
  local b
  for b in kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok kwokctl; do
    [[ -x "${K8S_BIN}/${b}" ]] || die "${K8S_BIN}/${b} is missing; run: make k8s-bins"
  done
  export KWOK_WORKDIR
  export KWOK_KUBE_VERSION="${K8S_VERSION}"
  export KWOK_KUBE_BINARY_PREFIX="${K8S_BIN}"
  export KWOK_KUBECTL_BINARY="${K8S_BIN}/kubectl"
  export KWOK_ETCD_BINARY="${K8S_BIN}/etcd"
  export KWOK_CONTROLLER_BINARY="${K8S_BIN}/kwok"
  # No release download may ever be attempted: every binary above is local.
  KWOKCTL="${K8S_BIN}/kwokctl"
}

# kwokctl adds a context to, and removes it from, the kubeconfig given by
# --kubeconfig (default ~/.kube/config). Keep the user's kubeconfig untouched:
# point it at a scratch file. (`delete cluster --kubeconfig ""` fails with
# "empty path" in kwokctl v0.8.0, so "" is no option.)
KWOKCTL_KUBECONFIG="${KWOK_WORKDIR}/kwokctl.kubeconfig"

kwok_up_cluster() {
  local name="$1" nodes="$2" m="$3"
  local -a args=(create cluster --name "${name}" --runtime binary --disable-qps-limits
    --kubeconfig "${KWOKCTL_KUBECONFIG}" --wait 2m --quiet-pull)
  if [[ -n "${FLEET_KWOK_CRDS}" ]]; then
    args+=(--enable-crds "${FLEET_KWOK_CRDS}")
  fi
  local extra
  for extra in ${FLEET_KWOK_EXTRA_ARGS}; do
    args+=(--extra-args "${extra}")
  done
  log "cluster ${name}: kwokctl ${args[*]@Q}"
  # 9>&-: the components kwokctl starts must not inherit the fleet lock.
  "${KWOKCTL}" "${args[@]}" 9>&-
  write_kubeconfig "${name}" "${KWOK_WORKDIR}/clusters/${name}/kubeconfig.yaml" "kwok-${name}"
  wait_api "${name}"
  if [[ ",${FLEET_KWOK_CRDS}," == *,Stage,* ]]; then
    kwok_apply_default_stages "${name}"
  fi
  if ((nodes > 0)); then
    create_nodes "${name}" "${m}" "${nodes}"
  fi
  log "cluster ${name}: ready with ${nodes} nodes ($(kubeconfig_of "${name}"))"
}

# Hook for failure injection: with --enable-crds=Stage no stage exists until
# applied; these are the stages kwok would otherwise run built in.
kwok_apply_default_stages() {
  local name="$1" dir s
  dir="$(cd "${ROOT}" && go mod download -json "sigs.k8s.io/kwok@${KWOK_VERSION}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -d "${dir}" ]] || die "cannot find the source of sigs.k8s.io/kwok@${KWOK_VERSION} in the module cache"
  # The Stage CRD is installed by kwokctl; wait until it is served.
  k "${name}" wait --for=condition=Established crd/stages.kwok.x-k8s.io --timeout=60s >/dev/null
  for s in node/fast node/heartbeat pod/general; do
    k "${name}" apply -k "${dir}/kustomize/stage/${s}" >/dev/null
  done
  log "cluster ${name}: applied kwok stages node/fast node/heartbeat pod/general"
}

kwok_up() {
  kwok_env
  local m=0 name
  while read -r name; do
    if [[ "${name}" == hub ]]; then
      kwok_up_cluster hub 0 0
    else
      m=$((m + 1))
      kwok_up_cluster "${name}" "$(nodes_for "${m}")" "${m}"
    fi
  done < <(cluster_names)
}

kwok_clusters() { # clusters that exist in our kwok workdir
  [[ -d "${KWOK_WORKDIR}/clusters" ]] || return 0
  find "${KWOK_WORKDIR}/clusters" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort
}

# Processes whose command line mentions our workdir: kube-apiserver, etcd,
# kube-controller-manager, kube-scheduler and kwok of this fleet only.
kwok_pids() { pgrep -f -- "${KWOK_WORKDIR}/" || true; }

kwok_down() {
  local name
  local -a pids started
  mapfile -t started < <(kwok_pids)
  if [[ -x "${K8S_BIN}/kwokctl" ]]; then
    export KWOK_WORKDIR
    while read -r name; do
      [[ -n "${name}" ]] || continue
      log "cluster ${name}: deleting"
      "${K8S_BIN}/kwokctl" delete cluster --name "${name}" --kubeconfig "${KWOKCTL_KUBECONFIG}" ||
        log "cluster ${name}: kwokctl delete failed; stopping its processes directly"
    done < <(kwok_clusters)
  fi
  mapfile -t pids < <(kwok_pids)
  if ((${#pids[@]} > 0)); then
    log "stopping leftover processes: ${pids[*]}"
    kill "${pids[@]}" 2>/dev/null || true
    if ! wait_gone 10 "${pids[@]}"; then
      kill -9 "${pids[@]}" 2>/dev/null || true
      wait_gone 10 "${pids[@]}" || true
    fi
  fi
  # Exited processes are reaped by their parent, PID 1 (kwokctl detaches them).
  if ((${#started[@]} > 0)) && ! wait_gone 10 --reaped "${started[@]}"; then
    log "warning: exited processes not yet reaped by PID 1 (zombies): ${started[*]}"
  fi
  rm -rf "${KWOK_WORKDIR}"
}

# wait_gone <seconds> [--reaped] <pid>...: until no pid is running (a zombie
# counts as gone unless --reaped).
wait_gone() {
  local deadline=$((SECONDS + $1)) reaped='' pid alive
  shift
  if [[ "${1:-}" == --reaped ]]; then
    reaped=1
    shift
  fi
  while ((SECONDS <= deadline)); do
    alive=
    for pid in "$@"; do
      if [[ -e "/proc/${pid}" ]] &&
        { [[ -n "${reaped}" ]] || ! grep -q '^State:.*Z' "/proc/${pid}/status" 2>/dev/null; }; then
        alive=1
      fi
    done
    [[ -n "${alive}" ]] || return 0
    sleep 0.2
  done
  return 1
}

# ---------------------------------------------------------------- kind
#
# Kind clusters that need no registry (../shared/kind-offline.md): every
# node from KIND_NODE_IMAGE (`make kind-image` builds it offline), no
# kindnetd and no CoreDNS (neither image exists offline): the node image's
# containerd gives pods their node's pod CIDR, and fleet.sh adds the routes
# between nodes that kindnetd would. The hub reaches members by their
# control plane's container IP, which the API server's certificate names.

KIND_PREFIX="${FLEET_KIND_PREFIX:-fleetjob-}"
# Workers per member, space separated, the last value repeating: member-1
# has a control plane and two workers, member-2 one, every control plane
# untainted. That is what the e2e suite needs (>= 3 usable nodes in
# member-1, >= 2 in member-2) and what 2 cores carry beside the hub.
FLEET_KIND_WORKERS="${FLEET_KIND_WORKERS:-2 1}"
KIND_JOB_IMAGES="${KIND_JOB_IMAGES:-registry.k8s.io/e2e-test-images/busybox:1.36.1-1 busybox:1.36}"
HUB_IMG="${HUB_IMG:-}"
DOCKER="${DOCKER:-docker}"
# Seconds a cluster's nodes get to join and turn Ready after kind returns.
KIND_READY_TIMEOUT="${KIND_READY_TIMEOUT:-180}"

kind_name() { echo "${KIND_PREFIX}$1"; }

kind_env() {
  command -v "${KIND}" >/dev/null 2>&1 || die "${KIND} not found; run: make kind"
  "${DOCKER}" info >/dev/null 2>&1 || die "no Docker engine answers (${DOCKER} info failed): the kind fleet needs one"
  if [[ -z "${KIND_NODE_IMAGE}" ]]; then
    die "KIND_NODE_IMAGE is not set: build the offline node image with make kind-image (make fleet-up sets it)"
  fi
  "${DOCKER}" image inspect "${KIND_NODE_IMAGE}" >/dev/null 2>&1 ||
    die "node image ${KIND_NODE_IMAGE} is not in the local Docker engine: run: make kind-image"
}

# workers_for <member index>: that member's worker count (the last value of
# FLEET_KIND_WORKERS repeats).
workers_for() {
  local -a counts
  read -r -a counts <<<"${FLEET_KIND_WORKERS}"
  local idx=$(($1 - 1))
  ((idx < ${#counts[@]})) || idx=$((${#counts[@]} - 1))
  echo "${counts[$idx]}"
}

# kind_inotify raises the host's inotify limits, before any node exists:
# with the default 128 instances a kubelet of the sixth or seventh node
# crash-loops ("inotify_init: too many open files") while kind create
# still exits 0. Raised only where this user may (root, or sudo without a
# password); else a warning says what to run.
kind_inotify() {
  local kv key want cur
  for kv in fs.inotify.max_user_instances=1024 fs.inotify.max_user_watches=524288; do
    key="${kv%=*}" want="${kv#*=}"
    cur="$(sysctl -n "${key}" 2>/dev/null || echo 0)"
    ((cur < want)) || continue
    if sysctl -w "${kv}" >/dev/null 2>&1 || sudo -n sysctl -w "${kv}" >/dev/null 2>&1; then
      log "raised ${key} from ${cur} to ${want}"
    else
      log "warning: ${key} is ${cur}, below ${want}, and cannot be raised here: kubelets may crash-loop; run: sudo sysctl -w ${kv}"
    fi
  done
}

# kind_config <workers>: a cluster's kind configuration.
kind_config() {
  local workers="$1" i
  cat <<'YAML'
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
networking:
  # kindnetd's image cannot be pulled offline; the node image's containerd
  # renders a bridge CNI config from the node's pod CIDR instead.
  disableDefaultCNI: true
  kubeProxyMode: nftables
kubeadmConfigPatches:
- |
  kind: KubeletConfiguration
  failCgroupV1: false
- |
  # A merge patch replaces the list: kind's own skipPhases is [preflight].
  # No CoreDNS: its image cannot be pulled offline.
  kind: InitConfiguration
  skipPhases: [preflight, addon/coredns]
nodes:
- role: control-plane
YAML
  for ((i = 0; i < workers; i++)); do
    echo '- role: worker'
  done
}

# kind_create <cluster> <workers>: the kind cluster, unless it exists.
kind_create() {
  local name="$1" workers="$2" cluster cfg start=${SECONDS}
  cluster="$(kind_name "${name}")"
  if "${KIND}" get clusters 2>/dev/null | grep -qx "${cluster}"; then
    log "cluster ${name}: kind cluster ${cluster} exists"
    return 0
  fi
  cfg="${FLEET_DIR}/kind-${name}.yaml"
  kind_config "${workers}" >"${cfg}"
  log "cluster ${name}: kind create cluster --name ${cluster} (control plane + ${workers} workers, image ${KIND_NODE_IMAGE})"
  "${KIND}" create cluster --name "${cluster}" --image "${KIND_NODE_IMAGE}" --config "${cfg}" \
    --kubeconfig "${FLEET_DIR}/kind-${name}.raw" --wait 3m 9>&-
  rm -f "${FLEET_DIR}/kind-${name}.raw"
  log "cluster ${name}: created in $((SECONDS - start))s"
}

# kind_kubeconfigs <cluster>: <cluster>.kubeconfig for this machine (kind's
# published port on 127.0.0.1) and <cluster>.internal.kubeconfig for a
# client inside Docker, such as the hub's pod: the control plane's
# container IP, as no name resolves without CoreDNS.
kind_kubeconfigs() {
  local name="$1" cluster src ip
  cluster="$(kind_name "${name}")"
  src="${FLEET_DIR}/kind-${name}.raw"
  "${KIND}" get kubeconfig --name "${cluster}" >"${src}"
  write_kubeconfig "${name}" "${src}" "kind-${cluster}"
  rm -f "${src}"
  ip="$(kind_control_plane_ip "${name}")"
  [[ -n "${ip}" ]] || die "cluster ${name}: no IP for ${cluster}-control-plane"
  cp "$(kubeconfig_of "${name}")" "$(kubeconfig_of "${name}.internal")"
  "${KUBECTL}" --kubeconfig "$(kubeconfig_of "${name}.internal")" config set-cluster "$("${KUBECTL}" --kubeconfig "$(kubeconfig_of "${name}")" config view -o jsonpath='{.clusters[0].name}')" \
    --server "https://${ip}:6443" >/dev/null
}

kind_control_plane_ip() {
  "${DOCKER}" inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$(kind_name "$1")-control-plane" 2>/dev/null
}

# kind_wait_nodes <cluster> <count>: until the cluster has count Node
# objects, each with a pod CIDR. kind returns once the control plane is
# Ready and exits 0 even when a worker never joined (a crash-looping
# kubelet), hence the count.
kind_wait_nodes() {
  local name="$1" want="$2" deadline=$((SECONDS + KIND_READY_TIMEOUT)) containers got cidrs
  containers="$("${KIND}" get nodes --name "$(kind_name "${name}")" 2>/dev/null | grep -c . || true)"
  ((containers == want)) || die "cluster ${name}: ${containers} node containers, want ${want}"
  while :; do
    got="$(k "${name}" get nodes --no-headers 2>/dev/null | grep -c . || true)"
    cidrs="$(k "${name}" get nodes -o jsonpath='{range .items[*]}{.spec.podCIDR}{"\n"}{end}' 2>/dev/null | grep -c . || true)"
    ((got == want && cidrs == want)) && return 0
    if ((SECONDS > deadline)); then
      k "${name}" get nodes -o wide >&2 || true
      die "cluster ${name}: ${got} of ${want} nodes registered (${cidrs} with a pod CIDR) after ${KIND_READY_TIMEOUT}s; a missing node's kubelet may be crash-looping (docker exec <node> journalctl -u kubelet; inotify limits?)"
    fi
    sleep 1
  done
}

# kind_routes <cluster>: in every node, a route to every other node's pod
# CIDR via that node's IP (kindnetd's job). Routes are lost when a node
# container restarts, and a Node deleted and registered again may get
# another pod CIDR: `hack/fleet.sh routes` sets them again.
kind_routes() {
  local name="$1" row orow node ip other oip ocidr
  local -a rows
  mapfile -t rows < <(k "${name}" get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.status.addresses[?(@.type=="InternalIP")].address} {.spec.podCIDR}{"\n"}{end}')
  for row in "${rows[@]}"; do
    read -r node ip _ <<<"${row}"
    for orow in "${rows[@]}"; do
      read -r other oip ocidr <<<"${orow}"
      [[ "${other}" != "${node}" && -n "${oip}" && -n "${ocidr}" ]] || continue
      "${DOCKER}" exec "${node}" ip route replace "${ocidr}" via "${oip}"
    done
  done
}

# kind_member_nodes <cluster> <member index>: the control plane may run
# Jobs (untainted), and every node gets a zone, a pool (round robin, by
# name) and its member's name, as the kwok fleet's nodes do.
kind_member_nodes() {
  local name="$1" i=0 node
  local -a nodes zones pools
  read -r -a zones <<<"${FLEET_ZONES}"
  read -r -a pools <<<"${FLEET_POOLS}"
  k "${name}" taint nodes -l node-role.kubernetes.io/control-plane node-role.kubernetes.io/control-plane:NoSchedule- >/dev/null 2>&1 || true
  mapfile -t nodes < <(k "${name}" get nodes -o name | sort)
  for node in "${nodes[@]}"; do
    k "${name}" label --overwrite "${node}" \
      "topology.kubernetes.io/zone=${zones[$((i % ${#zones[@]}))]}" \
      "fleetjob.io/pool=${pools[$((i % ${#pools[@]}))]}" \
      "fleetjob.io/member=${name}" >/dev/null
    i=$((i + 1))
  done
}

kind_wait_ready() {
  local name="$1"
  k "${name}" wait --for=condition=Ready nodes --all --timeout="${KIND_READY_TIMEOUT}s" >/dev/null ||
    { k "${name}" get nodes -o wide >&2; die "cluster ${name}: nodes not Ready after ${KIND_READY_TIMEOUT}s"; }
}

# kind_load <cluster> <image>...: images from the local Docker engine into
# every node of the cluster (nothing is pulled: IfNotPresent finds them).
kind_load() {
  local name="$1" img
  shift
  for img in "$@"; do
    "${DOCKER}" image inspect "${img}" >/dev/null 2>&1 || die "image ${img} is not in the local Docker engine: run: make kind-images"
  done
  "${KIND}" load docker-image --name "$(kind_name "${name}")" "$@" >/dev/null
  log "cluster ${name}: loaded $*"
}

# kind_deploy_hub: the hub controller deployed in the hub cluster from the
# install manifests, as a user deploys it (make deploy IMG=...).
kind_deploy_hub() {
  local start=${SECONDS}
  kind_load hub "${HUB_IMG}"
  make -C "${ROOT}" --no-print-directory deploy IMG="${HUB_IMG}" KUBECTL="${KUBECTL}" \
    KUBECONFIG="$(kubeconfig_of hub)" >/dev/null
  k hub -n fleetjob-system rollout status deployment/fleetjob-hub --timeout=180s >/dev/null ||
    die "the hub Deployment did not roll out; kubectl -n fleetjob-system describe pods"
  log "cluster hub: hub controller ${HUB_IMG} deployed in $((SECONDS - start))s"
}

# kind_nodes_up <cluster> <member index or 0 for the hub>: everything after
# kind create that makes the cluster usable, safe to run again.
kind_nodes_up() {
  local name="$1" m="$2" workers=0 start=${SECONDS}
  ((m == 0)) || workers="$(workers_for "${m}")"
  kind_wait_nodes "${name}" $((1 + workers))
  kind_routes "${name}"
  kind_wait_ready "${name}"
  wait_api "${name}"
  if ((m > 0)); then
    kind_member_nodes "${name}"
  fi
  log "cluster ${name}: $((1 + workers)) nodes Ready $((SECONDS - start))s after create"
}

# kind_up_cluster <cluster> <member index or 0 for the hub>: one cluster,
# created and made usable.
kind_up_cluster() {
  local name="$1" m="$2" workers=0
  ((m == 0)) || workers="$(workers_for "${m}")"
  kind_create "${name}" "${workers}"
  kind_kubeconfigs "${name}"
  kind_nodes_up "${name}" "${m}"
  if ((m > 0)); then
    # shellcheck disable=SC2086 # a list of image names
    kind_load "${name}" ${KIND_JOB_IMAGES}
  fi
  log "cluster ${name}: ready ($(kubeconfig_of "${name}"); in Docker: $(kubeconfig_of "${name}.internal"))"
}

# kind_up creates the clusters at once, each in a process of its own: most
# of a kind create is waiting (kubeadm on the control plane, kubelets
# joining), and one after another they took 27 + 51 + 52 s.
kind_up() {
  kind_env
  kind_inotify
  local m=0 name failed=""
  local -a names pids
  while read -r name; do
    names+=("${name}")
    if [[ "${name}" == hub ]]; then
      kind_up_cluster hub 0 &
    else
      m=$((m + 1))
      kind_up_cluster "${name}" "${m}" &
    fi
    pids+=($!)
  done < <(cluster_names)
  local i
  for i in "${!pids[@]}"; do
    wait "${pids[i]}" || failed+=" ${names[i]}"
  done
  [[ -z "${failed}" ]] || die "could not bring up the kind cluster(s)${failed} (their errors above)"
  if [[ -n "${HUB_IMG}" ]]; then
    kind_deploy_hub
  fi
}

# cmd_routes: the routes between the nodes of every kind cluster again.
cmd_routes() {
  local name
  [[ "$(cat "${PROVIDER_FILE}" 2>/dev/null)" == kind ]] || die "routes: not a kind fleet"
  while read -r name; do
    kind_routes "${name}"
  done < <(fleet_clusters)
}

kind_down() {
  command -v "${KIND}" >/dev/null 2>&1 || { log "${KIND} not found; nothing to delete"; return 0; }
  local name cluster existing
  existing="$("${KIND}" get clusters 2>/dev/null || true)"
  while read -r name; do
    cluster="$(kind_name "${name}")"
    if grep -qx "${cluster}" <<<"${existing}"; then
      log "cluster ${name}: kind delete cluster --name ${cluster}"
      "${KIND}" delete cluster --name "${cluster}" 9>&- || log "warning: deleting kind cluster ${cluster} failed"
    fi
  done < <(fleet_clusters)
}

# ---------------------------------------------------------------- commands

cmd_up() {
  local provider start
  provider="$(detect_provider)"
  mkdir -p "${FLEET_DIR}"
  if [[ -f "${PROVIDER_FILE}" && "$(cat "${PROVIDER_FILE}")" != "${provider}" ]]; then
    die "a ${provider} fleet was requested but a $(cat "${PROVIDER_FILE}") fleet exists; run: make fleet-down"
  fi
  echo "${provider}" >"${PROVIDER_FILE}"
  cluster_names | sort -uV - "${CLUSTERS_FILE}" 2>/dev/null >"${CLUSTERS_FILE}.tmp" || cluster_names >"${CLUSTERS_FILE}.tmp"
  mv "${CLUSTERS_FILE}.tmp" "${CLUSTERS_FILE}"
  start="${SECONDS}"
  log "provider ${provider}: hub + ${FLEET_MEMBERS} members"
  case "${provider}" in
    kwok) kwok_up ;;
    kind) kind_up ;;
    *) die "unknown FLEET_PROVIDER ${provider} (want kwok or kind)" ;;
  esac
  log "fleet up in $((SECONDS - start))s; kubeconfigs: ${FLEET_DIR}/<cluster>.kubeconfig"
}

cmd_down() {
  local provider pids
  provider="$(cat "${PROVIDER_FILE}" 2>/dev/null || detect_provider)"
  case "${provider}" in
    kind) kind_down ;;
  esac
  # Always clean the kwok workdir: it is cheap and catches half-created fleets.
  kwok_down
  rm -f "${FLEET_DIR}"/*.kubeconfig "${FLEET_DIR}"/kind-*.yaml "${PROVIDER_FILE}" "${CLUSTERS_FILE}"
  pids="$(kwok_pids)"
  [[ -z "${pids}" ]] || die "processes still running: ${pids//$'\n'/ }"
  log "fleet down"
}

cmd_status() {
  local provider name kc server nodes ready
  provider="$(cat "${PROVIDER_FILE}" 2>/dev/null || true)"
  if [[ -z "${provider}" ]]; then
    echo "no fleet (run: make fleet-up)"
    return 0
  fi
  printf '%-10s %-6s %-8s %-28s %s\n' CLUSTER PROVIDER STATE SERVER NODES
  while read -r name; do
    kc="$(kubeconfig_of "${name}")"
    if [[ ! -f "${kc}" ]]; then
      printf '%-10s %-6s %-8s %-28s %s\n' "${name}" "${provider}" missing - -
      continue
    fi
    server="$("${KUBECTL}" --kubeconfig "${kc}" config view -o jsonpath='{.clusters[0].cluster.server}')"
    if nodes="$(k "${name}" get nodes --request-timeout=5s --no-headers 2>/dev/null)"; then
      ready="$(grep -cw Ready <<<"${nodes}" || true)"
      printf '%-10s %-6s %-8s %-28s %s\n' "${name}" "${provider}" up "${server}" "${ready}/$(grep -c . <<<"${nodes}" || true) Ready"
    else
      printf '%-10s %-6s %-8s %-28s %s\n' "${name}" "${provider}" down "${server}" -
    fi
  done < <(fleet_clusters)
}

# Serialize up and down of one FLEET_DIR: a `down` while an `up` is halfway
# would delete clusters under it. Daemons must not inherit fd 9 (see 9>&-),
# or they would hold the lock for their whole life.
lock_fleet() {
  mkdir -p "${FLEET_DIR}"
  command -v flock >/dev/null 2>&1 || return 0
  exec 9>"${FLEET_DIR}/.lock"
  if ! flock -n 9; then
    log "waiting for another fleet.sh up/down on ${FLEET_DIR}"
    flock 9
  fi
}

case "${1:-}" in
  up) lock_fleet && cmd_up ;;
  down) lock_fleet && cmd_down ;;
  status) cmd_status ;;
  provider) detect_provider ;;
  routes) cmd_routes ;;
  *)
    echo "usage: $0 up|down|status|provider|routes" >&2
    exit 2
    ;;
esac
