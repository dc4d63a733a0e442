#!/usr/bin/env bash
# Copyright 2026 The fleetjob Authors.
# SPDX-License-Identifier: Apache-2.0
#
# test-race.sh runs every package's tests with the race detector, as
# `go test -race ./...` would, except that the hub envtest suite runs as two
# processes, each with its own API servers and its own hub, on two halves of
# its spec files. That suite is the longest package by far (~570 s cold
# under -race, more than the 10-minute default timeout of a loaded CI
# machine), and `go test` runs one package in one process: the other test
# slot went idle for minutes at the end of every run. Its specs wait on
# clocks and API servers far more than they compute, so three processes on
# two cores finish well before one.
#
# Environment: HUB_FIRST, a regular expression of the hub suite's spec files
# the first process runs (the second runs the rest, so a new file always runs
# in exactly one); TEST_TIMEOUT, each process's timeout [20m];
# KUBEBUILDER_ASSETS and GORACE as for go test.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
HUB_PKG=./test/integration/hub
# The halves measured on 2026-12-05 (per-file wall time of the suite's
# specs, from its JSON report): ~260 s each on an idle machine.
HUB_FIRST="${HUB_FIRST:-/(clusterjob|faults|runs|ownership|disruption|tenancy|drain|starts|approval|approval_policy|budget|events|shardedhubs)_test\.go$}"
TEST_TIMEOUT="${TEST_TIMEOUT:-20m}"

work="$(mktemp -d)"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "${pid}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "${work}"
}
trap cleanup EXIT

# One compile of the suite for both processes.
go test -race -c -o "${work}/hub.test" "${HUB_PKG}"

half() {
  local name=$1 start=${SECONDS} rc=0
  shift
  (cd "${HUB_PKG}" && "${work}/hub.test" -test.count=1 -test.timeout="${TEST_TIMEOUT}" "$@") >"${work}/${name}.log" 2>&1 || rc=$?
  echo "$((SECONDS - start))" >"${work}/${name}.seconds"
  return "${rc}"
}
half first "-ginkgo.focus-file=${HUB_FIRST}" &
pids+=($!)
half second "-ginkgo.skip-file=${HUB_FIRST}" &
pids+=($!)

rc=0
module="$(go list -m)"
# shellcheck disable=SC2046 # one argument per package
go test -race -count=1 -timeout "${TEST_TIMEOUT}" $(go list ./... | grep -vx "${module}/${HUB_PKG#./}") || rc=$?

names=(first second)
for i in 0 1; do
  name=${names[i]} hrc=0
  wait "${pids[i]}" || hrc=$?
  seconds="$(cat "${work}/${name}.seconds" 2>/dev/null || echo '?')"
  if ((hrc == 0)); then
    printf 'ok  \t%s/%s (%s half of its spec files)\t%ss\n' "${module}" "${HUB_PKG#./}" "${name}" "${seconds}"
  else
    # The whole output: ginkgo ends it with the failures' summary.
    cat "${work}/${name}.log"
    printf 'FAIL\t%s/%s (%s half of its spec files)\t%ss\n' "${module}" "${HUB_PKG#./}" "${name}" "${seconds}"
    rc=1
  fi
done
pids=()
exit "${rc}"
