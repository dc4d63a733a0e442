#!/usr/bin/env bash
# hack/kind/kind.sh runs kind (KIND_BINARY, by default bin/kind-<KIND_VERSION>)
# with its arguments, adapted to the host. Use it wherever kind would run:
#
#   hack/kind/kind.sh create cluster --name c --config c.yaml --kubeconfig c.kubeconfig
#   hack/kind/kind.sh load docker-image busybox:1.36 --name c
#   hack/kind/kind.sh delete cluster --name c
#
# What it adds:
#   - Hosts that refuse privileged containers (here: the VM's capability
#     bounding set lacks CAP_SYS_RESOURCE and Docker 20.10 asks for every
#     capability for --privileged, "unable to apply caps: operation not
#     permitted"). Found by trying, once per Docker daemon: `docker run
#     --privileged` of the node image, the result kept in
#     bin/kind/privileged-<daemon id>. If it fails, kind runs with
#     hack/kind/shim first on its PATH, whose `docker` gives nodes every
#     capability the host allows instead of --privileged (see there). Where
#     privileged containers work, kind runs unchanged.
#   - KIND_EXPERIMENTAL_CONTAINERD_SNAPSHOTTER=overlayfs (unless set) when
#     Docker's storage driver is fuse-overlayfs: the node's root then reports
#     fuseblk and kind's entrypoint would pick the fuse-overlayfs snapshotter,
#     which the node image lacks; overlayfs works on the node's /var volume.
#   - `create cluster` without --image gets --image of bin/kind/node-image
#     (`make kind-image`): kind's default image would be pulled, and is 1.37.
#   - `create cluster` raises fs.inotify.max_user_instances to 1024 and
#     max_user_watches to 524288 where they are lower (as root; else it
#     warns): with the default 128 instances, the 7th node's kubelet
#     crash-looped ("inotify_init: too many open files") while kind still
#     exited 0. Check the node count after every create.
set -o errexit -o nounset -o pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "${HERE}/../.." && pwd)"
KIND_VERSION="${KIND_VERSION:-v0.33.0}"
KIND_BINARY="${KIND_BINARY:-${REPO}/bin/kind-${KIND_VERSION}}"
KIND_DIR="${KIND_DIR:-${REPO}/bin/kind}"

log() { echo "kind.sh: $*" >&2; }
die() { log "$*"; exit 1; }

main() {
  [[ -x "${KIND_BINARY}" ]] || die "${KIND_BINARY} not found: run make kind"
  [[ "$(readlink -f "${KIND_BINARY}")" != "$(readlink -f "$0")" ]] || die "KIND_BINARY is this script; point it at kind"
  local args=("$@")
  if [[ "${1:-}" == create && "${2:-}" == cluster ]]; then
    if ! has_flag --image "$@" && [[ -s "${KIND_DIR}/node-image" ]]; then
      args+=(--image "$(cat "${KIND_DIR}/node-image")")
    fi
    raise_inotify_limits
  fi
  if needs_shim "${args[@]}"; then
    FLEETJOB_REAL_DOCKER="$(command -v docker)"
    export FLEETJOB_REAL_DOCKER
    PATH="${HERE}/shim:${PATH}"
  fi
  if [[ -z "${KIND_EXPERIMENTAL_CONTAINERD_SNAPSHOTTER:-}" ]] &&
    [[ "$(docker info -f '{{.Driver}}' 2>/dev/null)" == fuse-overlayfs ]]; then
    export KIND_EXPERIMENTAL_CONTAINERD_SNAPSHOTTER=overlayfs
  fi
  exec "${KIND_BINARY}" "${args[@]}"
}

# has_flag says whether the flag $1 is among the arguments $2...
has_flag() {
  local flag="$1" a
  shift
  for a in "$@"; do
    [[ "${a}" == "${flag}" || "${a}" == "${flag}="* ]] && return 0
  done
  return 1
}

# flag_value prints the value of the flag $1 among the arguments $2...
flag_value() {
  local flag="$1"
  shift
  while [[ $# -gt 0 ]]; do
    case "$1" in
      "${flag}") echo "${2:-}"; return 0 ;;
      "${flag}="*) echo "${1#*=}"; return 0 ;;
    esac
    shift
  done
}

# needs_shim says whether kind must run with the docker shim: only if
# privileged containers fail here. The probe runs the node image (the one
# image sure to be there before a create), once per Docker daemon.
needs_shim() {
  local id cache
  id="$(docker info -f '{{.ID}}' 2>/dev/null | tr -c 'A-Za-z0-9\n' '-')"
  [[ -n "${id}" ]] || return 1 # no Docker: kind says so itself
  cache="${KIND_DIR}/privileged-${id}"
  if [[ ! -f "${cache}" ]]; then
    local image
    image="$(flag_value --image "$@")"
    if [[ -z "${image}" && -s "${KIND_DIR}/node-image" ]]; then image="$(cat "${KIND_DIR}/node-image")"; fi
    if [[ -z "${image}" ]] || ! docker image inspect "${image}" >/dev/null 2>&1; then
      return 1 # nothing local to try with; kind runs unchanged (and pulls)
    fi
    mkdir -p "${KIND_DIR}"
    if docker run --rm --privileged --entrypoint /bin/true "${image}" >/dev/null 2>&1; then
      echo yes >"${cache}"
    else
      log "privileged containers fail on this host: running kind through hack/kind/shim/docker"
      echo no >"${cache}"
    fi
  fi
  [[ "$(cat "${cache}")" == no ]]
}

raise_inotify_limits() {
  local key want have
  for key in fs.inotify.max_user_instances=1024 fs.inotify.max_user_watches=524288; do
    want="${key#*=}"
    have="$(sysctl -n "${key%=*}")"
    if ((have < want)); then
      if [[ "$(id -u)" == 0 ]]; then
        sysctl -q -w "${key}"
        log "raised ${key%=*} from ${have} to ${want}"
      else
        log "WARNING: ${key%=*} is ${have}; nodes may fail past a few (sudo sysctl -w ${key})"
      fi
    fi
  done
}

main "$@"
