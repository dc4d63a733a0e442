#!/usr/bin/env bash
# hack/kind/images.sh makes the images the suite loads into kind clusters,
# offline (nothing is pulled: these machines reach no registry):
#
#   images.sh busybox          registry.k8s.io/e2e-test-images/busybox:1.36.1-1
#                              and busybox:1.36, from Debian's busybox-static
#                              (`make kind-images`)
#   images.sh hub IMG BINARY   the hub image IMG FROM scratch, from a static
#                              fleetjob-hub binary (`make hub-image`)
#
# The samples and the suite name the busybox image with a fixed tag, so pods
# use IfNotPresent and start from the image `kind load docker-image` put in
# each node; a :latest tag would make the kubelet pull and fail. Note that
# busybox-static's wget crashes in pods (static glibc name lookup): use nc.
#
# Each image carries a label with the hash of its inputs and is not made again
# while they are unchanged.
set -o errexit -o nounset -o pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "${HERE}/../.." && pwd)"
KIND_DIR="${KIND_DIR:-${REPO}/bin/kind}"
BUSYBOX_IMAGES=(registry.k8s.io/e2e-test-images/busybox:1.36.1-1 busybox:1.36)
INPUTS_LABEL=io.fleetjob.inputs
PATH_ENV='ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

T0=${SECONDS}
log() { echo "images.sh [$((SECONDS - T0)) s]: $*" >&2; }
die() { log "$*"; exit 1; }

main() {
  if [[ -L "${KIND_DIR}" ]]; then rm -f "${KIND_DIR}"; fi # an old bin/kind link to kind
  mkdir -p "${KIND_DIR}"
  case "${1:-}" in
    busybox) busybox_images ;;
    hub)
      [[ $# -eq 3 ]] || die "usage: images.sh hub IMG BINARY"
      hub_image "$2" "$3"
      ;;
    *) die "usage: images.sh busybox | hub IMG BINARY" ;;
  esac
}

# up_to_date says whether every image $2... exists with the inputs hash $1.
up_to_date() {
  local key="$1" img
  shift
  for img in "$@"; do
    [[ "$(docker image inspect -f "{{index .Config.Labels \"${INPUTS_LABEL}\"}}" "${img}" 2>/dev/null)" == "${key}" ]] || return 1
  done
}

inputs_key() {
  sha256sum "${HERE}/images.sh" "$@" | cut -d' ' -f1 | sha256sum | cut -c1-64
}

# base_files writes what any image needs to run as root or as the nonroot
# user of distroless (65532): /tmp, /etc/passwd and /etc/group.
base_files() {
  local stage="$1"
  mkdir -p "${stage}/tmp" "${stage}/etc" "${stage}/root"
  chmod 1777 "${stage}/tmp"
  printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >"${stage}/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' 'nonroot:x:65532:' >"${stage}/etc/group"
}

# busybox_deb prints the path of busybox-static's package, downloaded once:
# asking apt for the current version takes ~10 s here (no package cache).
busybox_deb() {
  local deb
  deb="$(find "${KIND_DIR}" -maxdepth 1 -name 'busybox-static_*.deb' | head -n 1)"
  if [[ -z "${deb}" ]]; then
    (cd "${KIND_DIR}" && apt-get download busybox-static >/dev/null 2>&1) ||
      (apt-get update >/dev/null && cd "${KIND_DIR}" && apt-get download busybox-static >/dev/null) ||
      die "apt-get download busybox-static failed"
    deb="$(find "${KIND_DIR}" -maxdepth 1 -name 'busybox-static_*.deb' | head -n 1)"
  fi
  echo "${deb}"
}

busybox_images() {
  local deb key
  deb="$(busybox_deb)"
  key="$(inputs_key "${deb}")"
  if up_to_date "${key}" "${BUSYBOX_IMAGES[@]}"; then
    log "${BUSYBOX_IMAGES[*]} are up to date"
    return 0
  fi
  local work
  work="$(mktemp -d "${TMPDIR:-/tmp}/fleetjob-busybox.XXXXXX")"
  # shellcheck disable=SC2064 # expand now: work is local
  trap "rm -rf '${work}'" EXIT
  dpkg-deb -x "${deb}" "${work}/deb"
  local stage="${work}/stage" applet
  mkdir -p "${stage}/bin" "${stage}/sbin" "${stage}/usr/bin" "${stage}/usr/sbin"
  install -m 0755 "${work}/deb/bin/busybox" "${stage}/bin/busybox"
  for applet in $("${stage}/bin/busybox" --list-full); do
    [[ "${applet}" == bin/busybox ]] || ln -sf /bin/busybox "${stage}/${applet}"
  done
  base_files "${stage}"
  tar -C "${stage}" --numeric-owner --owner=0 --group=0 -cf - . |
    docker import --change "${PATH_ENV}" --change 'CMD ["sh"]' \
      --change "LABEL ${INPUTS_LABEL}=${key}" - "${BUSYBOX_IMAGES[0]}" >/dev/null
  local img
  for img in "${BUSYBOX_IMAGES[@]:1}"; do docker tag "${BUSYBOX_IMAGES[0]}" "${img}"; done
  log "made ${BUSYBOX_IMAGES[*]} from $(basename "${deb}")"
}

# hub_image packs the static hub binary $2 as image $1, as the Dockerfile's
# distroless image has it: /fleetjob-hub, user 65532, CA certificates.
hub_image() {
  local img="$1" binary="$2" key
  file -L "${binary}" | grep -q 'statically linked' || die "${binary} is not statically linked"
  key="$(inputs_key "${binary}")"
  if up_to_date "${key}" "${img}"; then
    log "${img} is up to date"
    return 0
  fi
  local stage
  stage="$(mktemp -d "${TMPDIR:-/tmp}/fleetjob-hub-image.XXXXXX")"
  # shellcheck disable=SC2064 # expand now: stage is local
  trap "rm -rf '${stage}'" EXIT
  base_files "${stage}"
  mkdir -p "${stage}/home/nonroot"
  chown 65532:65532 "${stage}/home/nonroot"
  install -m 0755 "${binary}" "${stage}/fleetjob-hub"
  if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
    install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "${stage}/etc/ssl/certs/ca-certificates.crt"
  fi
  tar -C "${stage}" --numeric-owner -cf - . |
    docker import --change 'USER 65532:65532' --change 'WORKDIR /' \
      --change 'ENTRYPOINT ["/fleetjob-hub"]' --change "LABEL ${INPUTS_LABEL}=${key}" - "${img}" >/dev/null
  log "made ${img} from ${binary}"
}

main "$@"
