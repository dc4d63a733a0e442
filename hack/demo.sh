#!/usr/bin/env bash
# Copyright 2026 The fleetjob Authors.
# SPDX-License-Identifier: Apache-2.0
#
# demo.sh runs fleetjob's main job end to end on a local fleet:
#
#   hack/demo.sh up     fleet up, CRDs on the hub, hub controller started,
#                       members registered by Secret, the sample ClusterJob
#                       applied and followed to its end
#   hack/demo.sh down   stop the hub controller and delete the fleet
#
# It fails (non-zero, with the controller's last log lines) when the run does
# not complete within DEMO_TIMEOUT seconds [180].
#
# The hub controller runs as a local process (kwok fleet). On a kind fleet
# (FLEET_PROVIDER=kind, needs Docker) hack/fleet.sh has loaded its image
# (HUB_IMG, built offline by make kind-images) into the hub cluster and
# deployed it there with `make deploy`, and the members are registered by
# their control plane's container IP, which the hub's pod reaches.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
K8S_VERSION="${K8S_VERSION:-v1.36.3}"
K8S_BIN="${K8S_BIN:-${ROOT}/bin/k8s/${K8S_VERSION}}"
FLEET_DIR="${FLEET_DIR:-${ROOT}/.fleet}"
if [[ -z "${KUBECTL:-}" ]]; then
  if [[ -x "${K8S_BIN}/kubectl" ]]; then KUBECTL="${K8S_BIN}/kubectl"; else KUBECTL=kubectl; fi
fi
DEMO_TIMEOUT="${DEMO_TIMEOUT:-180}"
SAMPLE="${SAMPLE:-${ROOT}/config/samples/fleetjob_v1alpha1_clusterjob_batch.yaml}"
HUB_LOG="${FLEET_DIR}/hub.log"
HUB_PID="${FLEET_DIR}/hub.pid"
NS=fleetjob-system

log() { printf '[demo] %s\n' "$*" >&2; }
hub() { "${KUBECTL}" --kubeconfig "${FLEET_DIR}/hub.kubeconfig" "$@"; }
member() { local m="$1"; shift; "${KUBECTL}" --kubeconfig "${FLEET_DIR}/${m}.kubeconfig" "$@"; }
members() { grep -v '^hub$' "${FLEET_DIR}/clusters"; }
provider() { cat "${FLEET_DIR}/provider"; }

fail() {
  log "FAILED: $*"
  if [[ -f "${HUB_LOG}" ]]; then
    log "last lines of the hub controller log (${HUB_LOG}):"
    tail -n 40 "${HUB_LOG}" >&2
  else
    hub -n "${NS}" logs deploy/fleetjob-hub --tail=40 >&2 || true
  fi
  exit 1
}

stop_hub() {
  if [[ -f "${HUB_PID}" ]]; then
    kill "$(cat "${HUB_PID}")" 2>/dev/null || true
    rm -f "${HUB_PID}"
  fi
}

start_hub() {
  if [[ "$(provider)" == kind ]]; then
    hub -n "${NS}" get deploy/fleetjob-hub >/dev/null 2>&1 ||
      fail "no hub Deployment in the kind hub: bring the fleet up with HUB_IMG set (make demo does)"
    hub -n "${NS}" rollout status deploy/fleetjob-hub --timeout=120s
    return
  fi
  stop_hub
  # A short health interval so the demo shows a lost member within seconds.
  "${ROOT}/bin/fleetjob-hub" --kubeconfig "${FLEET_DIR}/hub.kubeconfig" \
    --metrics-bind-address 0 --health-probe-bind-address 0 \
    --member-health-interval 2s >"${HUB_LOG}" 2>&1 &
  echo $! >"${HUB_PID}"
  log "hub controller started (pid $(cat "${HUB_PID}"), log ${HUB_LOG})"
}

# register <member> <labels...>: `kubectl fleetjob register`: least-privilege
# RBAC and a token in the member, checked, then the hub's registration Secret.
register() {
  local m="$1"
  shift
  local -a args=(--member-kubeconfig "${FLEET_DIR}/${m}.kubeconfig" --member-context "${m}")
  if [[ "$(provider)" == kind ]]; then
    # The hub runs in its own kind cluster: it reaches members on the kind
    # network, by IP (no CoreDNS).
    args+=(--server "$("${KUBECTL}" --kubeconfig "${FLEET_DIR}/${m}.internal.kubeconfig" config view --minify -o jsonpath='{.clusters[0].cluster.server}')")
  fi
  local label
  for label in "$@"; do
    args+=(--label "${label}")
  done
  plugin register "${m}" "${args[@]}" >&2
}

plugin() { "${ROOT}/bin/kubectl-fleetjob" --kubeconfig "${FLEET_DIR}/hub.kubeconfig" "$@"; }

# check_pinning verifies, in every member, that each Job's pod ran on the
# node the Job is for.
check_pinning() {
  local m total=0 bad=0 line job node ran
  for m in $(members); do
    while read -r line; do
      [[ -z "${line}" ]] && continue
      read -r job node <<<"${line}"
      ran="$(member "${m}" -n "${NS}" get pods -l job-name="${job}" -o jsonpath='{.items[0].spec.nodeName}' 2>/dev/null || true)"
      total=$((total + 1))
      if [[ "${ran}" != "${node}" ]]; then
        bad=$((bad + 1))
        log "Job ${m}/${job} is for ${node} but ran on '${ran}'"
      fi
    done < <(member "${m}" -n "${NS}" get jobs -l app.kubernetes.io/managed-by=fleetjob \
      -o go-template='{{range .items}}{{.metadata.name}} {{index .metadata.annotations "fleetjob.io/node"}}{{"\n"}}{{end}}')
  done
  ((bad == 0)) || fail "${bad} of ${total} Jobs ran on another node than their own"
  log "${total} of ${total} Jobs ran on exactly their named node"
}

# wait_established waits for the CRDs to serve; `kubectl wait` errors out
# instead of waiting while a new CRD has no conditions yet.
wait_established() {
  local deadline=$((SECONDS + 60)) crd
  for crd in clusterjobs.fleetjob.io memberruns.fleetjob.io clustersets.fleetjob.io clustersetbindings.fleetjob.io memberclusters.fleetjob.io fleetdisruptionbudgets.fleetjob.io; do
    until [[ "$(hub get crd "${crd}" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" == True ]]; do
      ((SECONDS < deadline)) || fail "the CRD ${crd} did not become Established within 60s"
      sleep 1
    done
  done
}

cmd_up() {
  local start=${SECONDS}
  if [[ "${FLEET_PROVIDER:-kwok}" != kind ]]; then
    make -C "${ROOT}" k8s-bins >/dev/null
  fi
  make -C "${ROOT}" build >/dev/null
  "${ROOT}/hack/fleet.sh" up
  hub apply --server-side -f "${ROOT}/config/crd/bases" >/dev/null
  wait_established
  # What a fresh hub needs: the policy that guards cluster-set bindings, and
  # the set default (every cluster registered without a set) bound to
  # namespace default, where the sample runs.
  hub apply --server-side -f "${ROOT}/config/admission/clusterset_bind.yaml" >/dev/null
  hub apply --server-side -f "${ROOT}/config/samples/tenancy/default.yaml" >/dev/null
  hub create namespace "${NS}" --dry-run=client -o yaml | hub apply -f - >/dev/null
  local i=0 m
  for m in $(members); do
    i=$((i + 1))
    register "${m}" env=demo "region=region-${i}"
  done
  start_hub
  local name
  name="$(hub create -f "${SAMPLE}" -o jsonpath='{.metadata.name}' 2>/dev/null || hub get -f "${SAMPLE}" -o jsonpath='{.metadata.name}')"
  log "applied ClusterJob ${name}; following it with kubectl fleetjob status -w (up to ${DEMO_TIMEOUT}s)"
  local rc=0
  timeout "${DEMO_TIMEOUT}" "${ROOT}/bin/kubectl-fleetjob" --kubeconfig "${FLEET_DIR}/hub.kubeconfig" -n default status "${name}" -w || rc=$?
  echo
  hub get clusterjob "${name}"
  local phase
  phase="$(hub get clusterjob "${name}" -o jsonpath='{.status.phase}')"
  ((rc != 124)) || fail "ClusterJob ${name} did not finish within ${DEMO_TIMEOUT}s (phase ${phase:-none})"
  [[ "${rc}" == 0 && "${phase}" == Completed ]] || fail "ClusterJob ${name} ended ${phase:-not at all} after $((SECONDS - start))s"
  check_pinning
  log "done in $((SECONDS - start))s. Tear the fleet down with: make demo-down"
}

cmd_down() {
  stop_hub
  "${ROOT}/hack/fleet.sh" down
}

case "${1:-}" in
up) cmd_up ;;
down) cmd_down ;;
*)
  echo "usage: $0 up|down" >&2
  exit 2
  ;;
esac
