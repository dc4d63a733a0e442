#!/usr/bin/env bash
# hack/release/manifests.sh IMG VERSION [OVERLAY] prints the hub's install
# manifests: config/OVERLAY, config/default unless given (CRDs, RBAC, the
# Deployment, its PodDisruptionBudget and the admission policies; sharded:
# the same with the shard's replicas, flag and Role) with the hub image IMG
# and the label app.kubernetes.io/version=VERSION on the Deployment and its
# pods, where `kubectl fleetjob version` reads which hub runs.
#
# `make deploy`, `make build-installer`, `make release`, the chart generator
# (`make chart`) and the install test all render through here, so they
# cannot differ. The image and the label are set on a copy of config/ in a
# temporary directory: no tracked file is ever rewritten (kustomize edit
# would rewrite config/manager/kustomization.yaml, and a later `make
# deploy` would silently deploy the last tag used).
#
# KUSTOMIZE names the kustomize binary (default: bin/kustomize, `make kustomize`).
set -o errexit -o nounset -o pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KUSTOMIZE="${KUSTOMIZE:-${REPO}/bin/kustomize}"

die() { echo "manifests.sh: $*" >&2; exit 1; }

[[ $# -eq 2 || $# -eq 3 ]] || die "usage: manifests.sh IMG VERSION [OVERLAY]"
img="$1" version="$2" overlay="${3:-default}"
[[ "${overlay}" =~ ^[a-z]+$ && -f "${REPO}/config/${overlay}/kustomization.yaml" ]] ||
  die "OVERLAY ${overlay@Q} is not a kustomization under config/ (default, sharded)"
[[ -n "${img}" ]] || die "IMG is empty"
# A label value: at most 63 characters, alphanumerics with - _ . inside.
[[ "${version}" =~ ^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$ ]] ||
  die "VERSION ${version@Q} is not a valid label value (like v0.1.0 or dev)"
[[ -x "${KUSTOMIZE}" ]] || die "no kustomize at ${KUSTOMIZE}: run \`make kustomize\` (or set KUSTOMIZE)"

tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
cp -R "${REPO}/config" "${tmp}/"
(
  cd "${tmp}/config/manager"
  "${KUSTOMIZE}" edit set image "fleetjob-hub=${img}"
  label=/metadata/labels/app.kubernetes.io~1version
  "${KUSTOMIZE}" edit add patch --kind Deployment --name fleetjob-hub --patch \
    "[{\"op\":\"add\",\"path\":\"${label}\",\"value\":\"${version}\"},{\"op\":\"add\",\"path\":\"/spec/template${label}\",\"value\":\"${version}\"}]"
)
"${KUSTOMIZE}" build "${tmp}/config/${overlay}"
