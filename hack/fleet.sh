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
#
# Providers (FLEET_PROVIDER):
#   kwok  real kube-apiserver/etcd/controller-manager/scheduler run as local
#         processes (kwokctl --runtime binary) from K8S_BIN; members get fake
#         nodes that kwok keeps Ready and whose pods kwok runs to completion.
#   kind  one control plane and two workers per cluster (needs a Docker engine).
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
#   FLEET_DIR           state directory [<repo>/.fleet]
#   K8S_VERSION         Kubernetes version of the binaries [v1.36.3]
#   K8S_BIN             directory with kube-*, kubectl, etcd, kwok, kwokctl
#                       [<repo>/bin/k8s/$K8S_VERSION]; see `make k8s-bins`
#   KWOK_VERSION        kwok module version, for its stage manifests [v0.8.0]
#   KIND                kind binary [kind]; KIND_NODE_IMAGE overrides its node image
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
# minutes for 5 members of 1,000 nodes; this takes seconds.
create_nodes() {
  local name="$1" m="$2" count="$3"
  (cd "${ROOT}" && go run ./hack/nodes --kubeconfig "$(kubeconfig_of "${name}")" \
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
  local name="$1" i
  for ((i = 0; i < 120; i++)); do
    if k "${name}" get serviceaccount default -n default >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.5
  done
  die "cluster ${name}: API server or ServiceAccount controller not ready after 60s"
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

kind_up() {
  command -v "${KIND}" >/dev/null 2>&1 || die "${KIND} not found; run: make kind"
  local m=0 name cfg src node i
  local -a workers zones pools
  read -r -a zones <<<"${FLEET_ZONES}"
  read -r -a pools <<<"${FLEET_POOLS}"
  while read -r name; do
    if ! "${KIND}" get clusters 2>/dev/null | grep -qx "${name}"; then
      cfg="${FLEET_DIR}/kind-${name}.yaml"
      printf '%s\n' 'kind: Cluster' 'apiVersion: kind.x-k8s.io/v1alpha4' 'nodes:' \
        '- role: control-plane' '- role: worker' '- role: worker' >"${cfg}"
      log "cluster ${name}: kind create cluster"
      "${KIND}" create cluster --name "${name}" --config "${cfg}" --wait 2m \
        --kubeconfig "${FLEET_DIR}/kind-${name}.raw" ${KIND_NODE_IMAGE:+--image "${KIND_NODE_IMAGE}"} 9>&-
    fi
    src="${FLEET_DIR}/kind-${name}.raw"
    "${KIND}" get kubeconfig --name "${name}" >"${src}"
    write_kubeconfig "${name}" "${src}" "kind-${name}"
    # For a hub running inside Docker: the members' in-network address.
    "${KIND}" get kubeconfig --name "${name}" --internal >"${src}"
    write_kubeconfig "${name}.internal" "${src}" "kind-${name}"
    rm -f "${src}"
    wait_api "${name}"
    if [[ "${name}" != hub ]]; then
      m=$((m + 1))
      mapfile -t workers < <(k "${name}" get nodes -l '!node-role.kubernetes.io/control-plane' -o name | sort)
      i=0
      for node in "${workers[@]}"; do
        k "${name}" label --overwrite "${node}" \
          "topology.kubernetes.io/zone=${zones[$((i % ${#zones[@]}))]}" \
          "fleetjob.io/pool=${pools[$((i % ${#pools[@]}))]}" \
          "fleetjob.io/member=${name}" >/dev/null
        i=$((i + 1))
      done
    fi
    log "cluster ${name}: ready ($(kubeconfig_of "${name}"))"
  done < <(cluster_names)
}

kind_down() {
  command -v "${KIND}" >/dev/null 2>&1 || { log "${KIND} not found; nothing to delete"; return 0; }
  local name
  while read -r name; do
    if "${KIND}" get clusters 2>/dev/null | grep -qx "${name}"; then
      log "cluster ${name}: deleting"
      "${KIND}" delete cluster --name "${name}"
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
  *)
    echo "usage: $0 up|down|status|provider" >&2
    exit 2
    ;;
esac
