#!/usr/bin/env bash
# Copyright 2026 The fleetjob Authors.
# SPDX-License-Identifier: Apache-2.0
#
# run.sh runs the e2e suite (`make e2e`): it brings up a fleet with
# hack/fleet.sh, runs `go test -tags e2e ./e2e/...` against it, and always
# deletes the fleet at the end, keeping the suite's exit code.
#
#   kwok  (E2E_PROVIDER=kwok) control planes as local processes with fake
#         nodes and kwok's Stage, Logs and ClusterLogs CRDs, so that specs
#         can fail pods or nodes on a chosen node and serve a pod's logs
#         from a file; the suite starts bin/fleetjob-hub itself.
#   kind  (E2E_PROVIDER=kind, needs Docker) three kind clusters from the
#         offline node image (hack/fleet.sh: a one-node hub, member-1 with
#         3 nodes, member-2 with 2); the hub controller image HUB_IMG is
#         loaded into the hub and deployed there with `make deploy`; the
#         suite registers the members (`kubectl fleetjob register --server`
#         their control plane's container IP) and scales the Deployment.
# The default is kwok; kind is used only when asked for by name. The test
# code is the same for both; specs labelled kwok-only or kind-only skip
# themselves on the other provider, saying why.
#
# The fleet is always deleted at the end, also when the suite fails or is
# interrupted; on a failure the kind clusters' logs are kept in ARTIFACTS.
#
# Environment (defaults in brackets):
#   E2E_PROVIDER   kwok or kind [kwok]
#   FLEET_DIR      the fleet's state directory [/tmp/fleetjob-e2e]: not the
#                  .fleet/ of `make fleet-up` or `make demo`, which stays up
#   E2E_TIMEOUT    go test -timeout [20m]; E2E_GINKGO_TIMEOUT the suite's own [18m]
#   E2E_FOCUS      run only the specs matching this regular expression
#   E2E_LABELS     run only the specs matching this Ginkgo label filter
#   E2E_KEEP_FLEET 1: leave the fleet up afterwards (for debugging)
#   ARTIFACTS      where failed specs leave logs and objects [<repo>/artifacts/e2e]
#   HUB_IMG        kind: the hub controller image, in the local Docker engine
#                  [fleetjob-hub:dev]; `make e2e-kind` builds it
#   K8S_BIN, KIND, KIND_NODE_IMAGE, KUBECTL, ...   as for hack/fleet.sh

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
K8S_VERSION="${K8S_VERSION:-v1.36.3}"
K8S_BIN="${K8S_BIN:-${ROOT}/bin/k8s/${K8S_VERSION}}"
E2E_TIMEOUT="${E2E_TIMEOUT:-20m}"
# Ginkgo stops first, so that failed specs still report and dump.
E2E_GINKGO_TIMEOUT="${E2E_GINKGO_TIMEOUT:-18m}"
E2E_FOCUS="${E2E_FOCUS:-}"
E2E_LABELS="${E2E_LABELS:-}"
KIND="${KIND:-kind}"
export FLEET_DIR="${FLEET_DIR:-/tmp/fleetjob-e2e}"
export ARTIFACTS="${ARTIFACTS:-${ROOT}/artifacts/e2e}"
if [[ -z "${KUBECTL:-}" ]]; then
  if [[ -x "${K8S_BIN}/kubectl" ]]; then KUBECTL="${K8S_BIN}/kubectl"; else KUBECTL=kubectl; fi
fi
export KUBECTL K8S_VERSION K8S_BIN KIND

log() { printf '[e2e] %s\n' "$*" >&2; }

E2E_PROVIDER="${E2E_PROVIDER:-$(FLEET_PROVIDER='' "${ROOT}/hack/fleet.sh" provider)}"
export E2E_PROVIDER FLEET_PROVIDER="${E2E_PROVIDER}"
if [[ "${E2E_PROVIDER}" == kwok ]]; then
  export FLEET_KWOK_CRDS=Stage,Logs,ClusterLogs
else
  # Names of its own: the suite never touches the kind fleet of
  # `make fleet-up` or `make demo`.
  export FLEET_KIND_PREFIX="${FLEET_KIND_PREFIX:-fleetjob-e2e-}"
  export HUB_IMG="${HUB_IMG:-fleetjob-hub:dev}"
fi

# Another kwok fleet's control planes would compete for the same ports.
other_fleet() {
  pgrep -fa -- '/kwok/clusters/' | grep -v -- "${FLEET_DIR}/kwok/" || true
}

# The suite's hub controller, if the suite was killed before it could stop it.
stop_controller() {
  local pid
  pid="$(cat "${FLEET_DIR}/e2e-hub.pid" 2>/dev/null || true)"
  if [[ -n "${pid}" ]] && grep -q fleetjob-hub "/proc/${pid}/cmdline" 2>/dev/null; then
    kill -9 "${pid}" 2>/dev/null || true
  fi
  rm -f "${FLEET_DIR}/e2e-hub.pid"
}

# artifacts keeps what explains a failed run of a kind fleet: every
# node's logs (kind export logs: kubelet, containerd, the pods' logs) and
# the hub's Deployment. The suite itself dumps each failed spec's objects.
artifacts() {
  [[ "${E2E_PROVIDER}" == kind ]] || return 0
  local name dir="${ARTIFACTS}/kind"
  mkdir -p "${dir}"
  log "keeping the kind clusters' logs in ${dir}"
  while read -r name; do
    # It fails on what the node image lacks (crictl) after exporting the rest.
    "${KIND}" export logs "${dir}/${name}" --name "${FLEET_KIND_PREFIX}${name}" >"${dir}/${name}-export.log" 2>&1 ||
      log "kind export logs of ${name} ended with an error, the rest is kept (see ${dir}/${name}-export.log)"
  done < <(cat "${FLEET_DIR}/clusters" 2>/dev/null)
  "${KUBECTL}" --kubeconfig "${FLEET_DIR}/hub.kubeconfig" -n fleetjob-system describe deployment,pods >"${dir}/hub-deployment.txt" 2>&1 || true
}

# child runs a command in a process group of its own and waits for it.
# bash runs a trap only once the foreground command has ended, and ignores
# a SIGINT its child survived: `fleet.sh up` or the suite would run to the
# end after a kill of this script. A wait is interrupted at once instead,
# and down stops the whole group before it deletes the fleet.
CHILD=
child() {
  setsid "$@" &
  CHILD=$!
  local rc=0
  wait "${CHILD}" || rc=$?
  CHILD=
  return "${rc}"
}

stop_child() {
  [[ -n "${CHILD}" ]] || return 0
  log "stopping ${CHILD} and its children"
  kill -TERM -- "-${CHILD}" 2>/dev/null || return 0
  local i
  for ((i = 0; i < 50; i++)); do
    kill -0 -- "-${CHILD}" 2>/dev/null || return 0
    sleep 0.2
  done
  kill -KILL -- "-${CHILD}" 2>/dev/null || true
}

# down runs on every exit: the fleet is deleted whatever happened.
down() {
  local rc=$?
  trap - EXIT INT TERM
  stop_child
  stop_controller
  if ((rc != 0)); then
    artifacts
  fi
  if [[ "${E2E_KEEP_FLEET:-}" == 1 ]]; then
    log "leaving the fleet up (FLEET_DIR=${FLEET_DIR}); delete it with: FLEET_DIR=${FLEET_DIR} hack/fleet.sh down"
  else
    local start=${SECONDS}
    "${ROOT}/hack/fleet.sh" down || log "warning: deleting the fleet failed"
    log "fleet deleted in $((SECONDS - start))s"
  fi
  exit "${rc}"
}

main() {
  local start=${SECONDS} rc=0 others
  others="$(other_fleet)"
  if [[ "${E2E_PROVIDER}" == kwok && -n "${others}" ]]; then
    log "another kwok fleet is running; stop it first (make fleet-down or make demo-down):"
    printf '%s\n' "${others}" | head -n 5 >&2
    exit 1
  fi
  mkdir -p "${FLEET_DIR}" "${ARTIFACTS}"
  trap down EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  log "provider ${E2E_PROVIDER}, fleet in ${FLEET_DIR}"
  # A fleet an earlier, killed run left behind in FLEET_DIR.
  "${ROOT}/hack/fleet.sh" down >/dev/null 2>&1 || true
  child "${ROOT}/hack/fleet.sh" up
  local up=$((SECONDS - start))
  if [[ "${E2E_PROVIDER}" == kind ]]; then
    # The suite starts it with its own flags once the members are registered.
    "${KUBECTL}" --kubeconfig "${FLEET_DIR}/hub.kubeconfig" -n fleetjob-system scale deployment/fleetjob-hub --replicas=0 >/dev/null
  fi
  local -a args=(-tags e2e ./e2e/... -count=1 -timeout "${E2E_TIMEOUT}" -v -args -ginkgo.v "-ginkgo.timeout=${E2E_GINKGO_TIMEOUT}")
  if [[ -n "${E2E_FOCUS}" ]]; then
    args+=("-ginkgo.focus=${E2E_FOCUS}")
  fi
  if [[ -n "${E2E_LABELS}" ]]; then
    args+=("-ginkgo.label-filter=${E2E_LABELS}")
  fi
  log "go test ${args[*]}"
  local suite_start=${SECONDS}
  # CGO_ENABLED=0, as `make build` compiles: the suite shares its compiled
  # client-go and controller-runtime with the hub's binaries (with cgo on,
  # a cold machine compiled them again: 3.5 minutes of the kwok stage).
  child env CGO_ENABLED=0 go -C "${ROOT}" test "${args[@]}" || rc=$?
  log "timings (${E2E_PROVIDER}): fleet up ${up}s, suite $((SECONDS - suite_start))s (exit code ${rc}), total $((SECONDS - start))s before deleting the fleet; artifacts of failed specs: ${ARTIFACTS}"
  return "${rc}"
}

main "$@"
