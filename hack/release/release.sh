#!/usr/bin/env bash
# hack/release/release.sh writes a release of fleetjob into dist/ (`make
# release VERSION=v0.1.0`), with nothing but Go, kustomize and a checkout,
# no registry and no Docker:
#
#   dist/install.yaml                           CRDs, RBAC, admission policies, the hub
#                                               Deployment (image IMG, labelled VERSION)
#   dist/install-sharded.yaml                   the same, with replicas sharing the members
#                                               (config/sharded, README "Sharded replicas")
#   dist/fleetjob-hub_<os>_<arch>               the hub, static, for HUB_PLATFORMS
#   dist/kubectl-fleetjob_<os>_<arch>.tar.gz    the plugin, static, for PLATFORMS
#   dist/krew/fleetjob.yaml                     the krew manifest (plugins/fleetjob.yaml)
#   dist/chart/fleetjob, dist/fleetjob-<semver>.tgz   the Helm chart, from install.yaml
#   dist/checksums.txt                          sha256 of each of the above
#
# The image itself is built separately from the same sources: `make
# docker-build` where a registry is reachable, `make hub-image` offline.
# A release leaves every tracked file as it was, and fails if the
# generated files (make manifests generate) were stale.
#
# Environment: VERSION (required), IMG (default fleetjob-hub:VERSION),
# PLATFORMS, HUB_PLATFORMS (os/arch lists), RELEASE_URL (where the archives
# will be downloaded from, for the krew manifest), KUSTOMIZE, MAKE.
set -o errexit -o nounset -o pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "${REPO}"
DIST="${REPO}/dist"
VERSION="${VERSION:-}"
IMG="${IMG:-fleetjob-hub:${VERSION}}"
PLATFORMS="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"
HUB_PLATFORMS="${HUB_PLATFORMS:-linux/amd64}"
RELEASE_URL="${RELEASE_URL:-https://github.com/fleetjob/fleetjob/releases/download/${VERSION}}"
MAKE="${MAKE:-make}"
export KUSTOMIZE="${KUSTOMIZE:-${REPO}/bin/kustomize}"

T0=${SECONDS}
log() { echo "release.sh [$((SECONDS - T0)) s]: $*" >&2; }
die() { log "$*"; exit 1; }

main() {
  [[ "${VERSION}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
    die "VERSION=${VERSION@Q}: want a release like v0.1.0 (make release VERSION=v0.1.0)"
  local before
  before="$(tracked_changes)"
  "${MAKE}" --no-print-directory manifests generate
  rm -rf "${DIST}"
  mkdir -p "${DIST}"
  log "install.yaml with image ${IMG}"
  hack/release/manifests.sh "${IMG}" "${VERSION}" >"${DIST}/install.yaml"
  hack/release/manifests.sh "${IMG}" "${VERSION}" sharded >"${DIST}/install-sharded.yaml"
  local p
  for p in ${HUB_PLATFORMS}; do build_hub "${p}"; done
  for p in ${PLATFORMS}; do build_plugin "${p}"; done
  chart
  log "krew manifest"
  mkdir -p "${DIST}/krew"
  go run ./hack/release/krew -template plugins/fleetjob.yaml -version "${VERSION}" -url "${RELEASE_URL}" \
    "${DIST}"/kubectl-fleetjob_*.tar.gz >"${DIST}/krew/fleetjob.yaml"
  (cd "${DIST}" && sha256sum install.yaml install-sharded.yaml fleetjob-hub_* kubectl-fleetjob_*.tar.gz fleetjob-*.tgz krew/fleetjob.yaml >checksums.txt)
  [[ "$(tracked_changes)" == "${before}" ]] ||
    die "tracked files changed (stale generated files? run make manifests generate chart and commit):
$(git status --porcelain)"
  log "dist/:"
  (cd "${DIST}" && find . -maxdepth 2 -type f ! -path './chart/*' | sort | sed 's|^\./|  |') >&2
}

# tracked_changes lists what differs from the commit (empty outside a
# git checkout, where there is nothing to compare with).
tracked_changes() {
  git status --porcelain --untracked-files=no 2>/dev/null || true
}

# ldflags stamp the release into pkg/version; -s -w only change the link,
# so the packages compiled by `make build` are reused.
ldflags() {
  echo "-s -w -X github.com/fleetjob/fleetjob/pkg/version.version=${VERSION}"
}

build_hub() {
  local os="${1%/*}" arch="${1#*/}"
  log "fleetjob-hub ${os}/${arch}"
  CGO_ENABLED=0 GOOS="${os}" GOARCH="${arch}" go build -ldflags "$(ldflags)" \
    -o "${DIST}/fleetjob-hub_${os}_${arch}" ./cmd/fleetjob-hub
}

build_plugin() {
  local os="${1%/*}" arch="${1#*/}" dir bin=kubectl-fleetjob
  [[ "${os}" == windows ]] && bin+=.exe
  log "kubectl-fleetjob ${os}/${arch}"
  dir="$(mktemp -d)"
  CGO_ENABLED=0 GOOS="${os}" GOARCH="${arch}" go build -ldflags "$(ldflags)" -o "${dir}/${bin}" ./cmd/kubectl-fleetjob
  archive "${DIST}/kubectl-fleetjob_${os}_${arch}.tar.gz" "${dir}" "${bin}"
  rm -rf "${dir}"
}

# archive packs the files $3... of directory $2 into $1, byte for byte the
# same from the same inputs (sorted, no owner, the commit's time).
archive() {
  local out="$1" dir="$2" mtime
  shift 2
  mtime="$(git log -1 --format=%ct 2>/dev/null || echo 0)"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@${mtime}" -C "${dir}" -cf - "$@" | gzip -n >"${out}"
}

# chart writes the chart from install.yaml and install-sharded.yaml
# themselves, so they cannot differ, and packages it as `helm package`
# names it.
chart() {
  log "Helm chart"
  mkdir -p "${DIST}/chart/fleetjob"
  go run ./hack/release/chart -version "${VERSION}" -sharded "${DIST}/install-sharded.yaml" -o "${DIST}/chart/fleetjob" <"${DIST}/install.yaml"
  local version
  version="$(sed -n 's/^version: //p' "${DIST}/chart/fleetjob/Chart.yaml")"
  archive "${DIST}/fleetjob-${version}.tgz" "${DIST}/chart" fleetjob
}

main "$@"
