#!/usr/bin/env bash
# Copyright 2026 The fleetjob Authors.
# SPDX-License-Identifier: Apache-2.0
#
# fleet-smoke.sh proves a member cluster of the local fleet (hack/fleet.sh up)
# schedules and completes Jobs: it runs a Job pinned to the member's first
# node by required node affinity on metadata.name, waits for it to complete
# and checks that its pod ran on that node.
#
#   hack/fleet-smoke.sh [cluster]      (default member-1)

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
K8S_VERSION="${K8S_VERSION:-v1.36.3}"
K8S_BIN="${K8S_BIN:-${ROOT}/bin/k8s/${K8S_VERSION}}"
FLEET_DIR="${FLEET_DIR:-${ROOT}/.fleet}"
CLUSTER="${1:-member-1}"
JOB="fleet-smoke"
NS="default"

if [[ -z "${KUBECTL:-}" ]]; then
  if [[ -x "${K8S_BIN}/kubectl" ]]; then KUBECTL="${K8S_BIN}/kubectl"; else KUBECTL=kubectl; fi
fi
KUBECONFIG_FILE="${FLEET_DIR}/${CLUSTER}.kubeconfig"
[[ -f "${KUBECONFIG_FILE}" ]] || { echo "no ${KUBECONFIG_FILE}; run: make fleet-up" >&2; exit 1; }
k() { "${KUBECTL}" --kubeconfig "${KUBECONFIG_FILE}" -n "${NS}" "$@"; }

node="$(k get nodes -l fleetjob.io/pool -o name | sort | head -n1)"
node="${node#node/}"
[[ -n "${node}" ]] || { echo "${CLUSTER}: no node labelled fleetjob.io/pool" >&2; exit 1; }

k delete job "${JOB}" --ignore-not-found --cascade=foreground --wait=true >/dev/null
start="${SECONDS}"
k apply -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: ${JOB}
spec:
  backoffLimit: 0
  ttlSecondsAfterFinished: 300
  template:
    spec:
      restartPolicy: Never
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchFields:
              - key: metadata.name
                operator: In
                values: ["${node}"]
      containers:
      - name: main
        image: busybox:1.36
        command: ["true"]
YAML

k wait --for=condition=Complete "job/${JOB}" --timeout=60s >/dev/null
ran_on="$(k get pods -l "batch.kubernetes.io/job-name=${JOB}" -o jsonpath='{.items[0].spec.nodeName}')"
phase="$(k get pods -l "batch.kubernetes.io/job-name=${JOB}" -o jsonpath='{.items[0].status.phase}')"
if [[ "${ran_on}" != "${node}" ]]; then
  echo "FAIL ${CLUSTER}: job ${JOB} pod ran on '${ran_on}', want '${node}'" >&2
  exit 1
fi
echo "OK ${CLUSTER}: job ${JOB} Complete in $((SECONDS - start))s; pod ${phase} on ${ran_on}"
k delete job "${JOB}" --cascade=background --wait=false >/dev/null
