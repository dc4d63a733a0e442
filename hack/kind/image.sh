#!/usr/bin/env bash
# hack/kind/image.sh builds fleetjob's kind node image offline (`make kind-image`).
#
# Why not `kind build node-image`: it pulls a base image, etcd, coredns, pause,
# kindnetd and local-path images, and these machines reach no registry (only
# the Go module proxy and Debian's archive). So the image is assembled the way
# kind's builder does it (sigs.k8s.io/kind pkg/build/nodeimage), from:
#   - a Debian bookworm root file system made by mmdebstrap, cached in
#     bin/kind/rootfs-<hash of its package list>.tar;
#   - kind's base image files (images/base/files of the sigs.k8s.io/kind module
#     in the Go module cache) and its Dockerfile steps, run in a chroot;
#   - containerd v2 (bin/containerd-<version>, `make kind-bins`), Debian's runc
#     and CNI plugins;
#   - kubelet, kubeadm and kubectl from bin/k8s/<version> in /usr/bin, and
#     /kind/version;
#   - the images kubeadm needs (kube-apiserver, kube-controller-manager,
#     kube-scheduler, kube-proxy, etcd, pause under the exact names of
#     `kubeadm config images list`), each made FROM scratch from our static
#     binaries with `docker import`, and imported into the root file system's
#     containerd store by a containerd started on the host, as kind's builder
#     does inside its build container (`ctr images import --all-platforms
#     --no-unpack --digests`, pinned so the kubelet never collects them).
# coredns is not made: clusters skip kubeadm's addon/coredns phase.
#
# fleetjob's additions, each harmless on a host that runs privileged containers:
#   - /usr/local/bin/entrypoint (hack/kind/node/entrypoint) remounts read-only
#     cgroup v1 hierarchies writable, then runs kind's entrypoint;
#   - containerd's CRI config: restrict_oom_score_adj = true (no process may
#     lower its oom_score_adj on these hosts; without it every pod sandbox
#     fails), the sandbox image kubeadm names, and a CNI conf_template that
#     replaces kindnetd (hack/kind/node/containerd-cni.toml).
#
# The image is tagged fleetjob/kind-node:<k8s version>-<12 hex of a hash of
# every input> (scripts, files, binaries, versions, package list). If that tag
# exists, nothing is done. Its name is written to $KIND_DIR/node-image.
# `image.sh rootfs` makes only the root file system (to overlap with builds);
# `image.sh clean` removes node images other than the current one.
# KIND_NODE_IMAGE set: that image is used as it is (nothing is built).
#
# Times on a 2-core VM (Docker 20.10 on fuse-overlayfs) shared with other
# builds, the binaries built: root file system 107 s (once per package list),
# assembly 51-126 s (most of it `docker import`), a warm run 2 s; the image is
# 910 MB (binaries stripped, see install_stripped).
set -o errexit -o nounset -o pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "${HERE}/../.." && pwd)"
K8S_VERSION="${K8S_VERSION:-v1.36.3}"
K8S_BIN="${K8S_BIN:-${REPO}/bin/k8s/${K8S_VERSION}}"
CONTAINERD_BIN="${CONTAINERD_BIN:-${REPO}/bin/containerd-v2.3.7}"
KIND_VERSION="${KIND_VERSION:-v0.33.0}"
KIND_DIR="${KIND_DIR:-${REPO}/bin/kind}"
KIND_NODE_IMAGE="${KIND_NODE_IMAGE:-}"
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DEBIAN_SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
IMAGE_REPO="${IMAGE_REPO:-fleetjob/kind-node}"

# The node's Debian packages: what kind's base image installs, minus what
# only kind's fuse-overlayfs, NFS and iSCSI paths use, plus Debian's runc and
# CNI plugins (kind builds its own) and busybox for debugging in a node.
PACKAGES=(
  systemd systemd-sysv dbus
  conntrack iptables nftables iproute2 ethtool util-linux mount kmod
  libseccomp2 e2fsprogs bash ca-certificates curl jq procps
  runc containernetworking-plugins busybox-static
)
# Documentation is never read in a node; leaving it out saves ~40 MB.
DPKG_OPTS=(
  'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/info/*'
  'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright'
  'path-exclude=/usr/share/locale/*'
)
# The Kubernetes binaries the node image holds, in /usr/bin or in images.
NODE_BINS=(kubelet kubeadm kubectl)
IMAGE_BINS=(kube-apiserver kube-controller-manager kube-scheduler kube-proxy etcd)
CONTAINERD_BINS=(containerd ctr containerd-shim-runc-v2)
PAUSE_BIN="${KIND_DIR}/pause"
KUBEADM_IMAGES="" # `kubeadm config images list`, set by check_inputs

T0=${SECONDS}
log() { echo "image.sh [$((SECONDS - T0)) s]: $*" >&2; }
die() { log "$*"; exit 1; }

# timed runs "$@" and logs how long it took, under the name $1.
timed() {
  local name="$1" start=${SECONDS}
  shift
  "$@"
  log "${name}: $((SECONDS - start)) s"
}

main() {
  prepare_kind_dir
  case "${1:-}" in
    "") if [[ -n "${KIND_NODE_IMAGE}" ]]; then use_given_image; else build_node_image; fi ;;
    rootfs) ensure_rootfs >/dev/null ;; # e.g. while the binaries build
    clean) clean ;;
    *) die "usage: image.sh [rootfs | clean]" ;;
  esac
}

use_given_image() {
  log "KIND_NODE_IMAGE=${KIND_NODE_IMAGE}: using it, building nothing"
  echo "${KIND_NODE_IMAGE}" >"${KIND_DIR}/node-image"
}

build_node_image() {
  check_inputs
  local key name rootfs_tar
  key="$(input_key)"
  name="${IMAGE_REPO}:${K8S_VERSION}-${key:0:12}"
  if docker image inspect "${name}" >/dev/null 2>&1; then
    log "${name} exists: nothing to build"
  else
    rootfs_tar="$(ensure_rootfs)"
    timed "node image assembly" assemble "${rootfs_tar}" "${name}" "${key}"
    log "node image ${name}: $(docker image inspect -f '{{.Size}}' "${name}" | awk '{printf "%d MB", $1/1000/1000}')"
  fi
  echo "${name}" >"${KIND_DIR}/node-image"
  log "its name is in ${KIND_DIR}/node-image"
}

# ensure_rootfs prints the path of the cached root file system tarball,
# made first if there is none for the current package list.
ensure_rootfs() {
  local tar
  tar="${KIND_DIR}/rootfs-${DEBIAN_SUITE}-$(rootfs_key | cut -c1-12).tar"
  [[ -f "${tar}" ]] || timed "root file system (mmdebstrap)" make_rootfs "${tar}" >&2
  echo "${tar}"
}

# prepare_kind_dir makes $KIND_DIR a directory: an older `make kind` left a
# bin/kind link to the kind binary there.
prepare_kind_dir() {
  if [[ -L "${KIND_DIR}" ]]; then rm -f "${KIND_DIR}"; fi
  mkdir -p "${KIND_DIR}"
}

check_inputs() {
  command -v docker >/dev/null || die "docker not found"
  command -v strip >/dev/null || die "strip not found (Debian package binutils)"
  local b
  for b in "${NODE_BINS[@]}" "${IMAGE_BINS[@]}"; do
    [[ -x "${K8S_BIN}/${b}" ]] || die "${K8S_BIN}/${b} missing: run make kind-bins"
  done
  for b in "${IMAGE_BINS[@]}"; do
    # FROM scratch images have no loader: a dynamic binary would not start.
    file -L "${K8S_BIN}/${b}" | grep -q 'statically linked' ||
      die "${K8S_BIN}/${b} is not statically linked: run make kind-bins (it rebuilds the binaries static)"
  done
  for b in "${CONTAINERD_BINS[@]}"; do
    [[ -x "${CONTAINERD_BIN}/${b}" ]] || die "${CONTAINERD_BIN}/${b} missing: run make kind-bins"
  done
  [[ -x "${PAUSE_BIN}" ]] || die "${PAUSE_BIN} missing: run make kind-bins"
  kind_base_files >/dev/null
  KUBEADM_IMAGES="$("${K8S_BIN}/kubeadm" config images list --kubernetes-version "${K8S_VERSION}" 2>/dev/null)"
}

# kind_base_files prints the directory of kind's base image files in the Go
# module cache, downloading the module (from the Go module proxy) if needed.
kind_base_files() {
  local dir
  dir="$(cd / && GOFLAGS='' go mod download -json "sigs.k8s.io/kind@${KIND_VERSION}" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -d "${dir}/images/base/files" ]] || die "kind ${KIND_VERSION}: no images/base/files in the module (${dir})"
  echo "${dir}/images/base/files"
}

rootfs_key() {
  printf '%s\n' "${DEBIAN_SUITE}" "${DEBIAN_MIRROR}" "${DEBIAN_SECURITY_MIRROR}" "${PACKAGES[@]}" "${DPKG_OPTS[@]}" |
    sha256sum | cut -d' ' -f1
}

# input_key hashes everything that goes into the node image: a warm run with
# the same inputs finds the tag and reuses the image.
input_key() {
  {
    echo "k8s=${K8S_VERSION} kind=${KIND_VERSION} rootfs=$(rootfs_key)"
    (cd "${HERE}" && find image.sh node -type f -print0 | sort -z | xargs -0 sha256sum)
    local b
    for b in "${NODE_BINS[@]}" "${IMAGE_BINS[@]}"; do binary_hash "${K8S_BIN}/${b}"; done
    for b in "${CONTAINERD_BINS[@]}"; do binary_hash "${CONTAINERD_BIN}/${b}"; done
    binary_hash "${PAUSE_BIN}"
  } | sed "s|${REPO}/||" | sha256sum | cut -d' ' -f1
}

# binary_hash prints the SHA-256 and name of the file $1. The hashes of the
# ~1 GB of binaries are remembered in $KIND_DIR/binary-hashes by size, mtime
# and inode: hashing them all took 5 s of CPU (38 s on a loaded machine) on
# every warm run. Content, not mtime, is the key so that identical binaries
# built in another checkout give the same image.
binary_hash() {
  local file="$1" cache="${KIND_DIR}/binary-hashes" stat hash
  stat="$(stat -L -c '%s %Y %i' "${file}")"
  hash="$(awk -v f="${file}" -v s="${stat}" '$2 == f && $3 " " $4 " " $5 == s {h = $1} END {print h}' "${cache}" 2>/dev/null)"
  if [[ -z "${hash}" ]]; then
    hash="$(sha256sum <"${file}" | cut -d' ' -f1)"
    echo "${hash} ${file} ${stat}" >>"${cache}"
  fi
  echo "${hash}  ${file}"
}

make_rootfs() {
  local out="$1"
  if ! command -v mmdebstrap >/dev/null; then
    log "installing mmdebstrap from Debian"
    apt-get install -y mmdebstrap >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y mmdebstrap >/dev/null; }
  fi
  local include dpkgopts=() o
  include="$(IFS=,; echo "${PACKAGES[*]}")"
  for o in "${DPKG_OPTS[@]}"; do dpkgopts+=(--dpkgopt="${o}"); done
  mmdebstrap --variant=minbase --include="${include}" "${dpkgopts[@]}" --format=tar --quiet \
    "${DEBIAN_SUITE}" "${out}.tmp.$$" \
    "deb ${DEBIAN_MIRROR} ${DEBIAN_SUITE} main" \
    "deb ${DEBIAN_MIRROR} ${DEBIAN_SUITE}-updates main" \
    "deb ${DEBIAN_SECURITY_MIRROR} ${DEBIAN_SUITE}-security main"
  mv "${out}.tmp.$$" "${out}"
  # Older root file systems of other package lists are never used again.
  find "${KIND_DIR}" -maxdepth 1 -name "rootfs-${DEBIAN_SUITE}-*.tar" ! -path "${out}" -delete
}

WORK=""
CONTAINERD_PID=""
cleanup() {
  if [[ -n "${CONTAINERD_PID}" ]]; then
    kill "${CONTAINERD_PID}" 2>/dev/null || true
    wait "${CONTAINERD_PID}" 2>/dev/null || true
  fi
  if [[ -n "${WORK}" ]]; then rm -rf "${WORK}"; fi
}
trap cleanup EXIT

assemble() {
  local rootfs_tar="$1" name="$2" key="$3"
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/fleetjob-kind-node.XXXXXX")"
  local root="${WORK}/rootfs"
  mkdir -p "${root}"
  tar -C "${root}" --numeric-owner -xpf "${rootfs_tar}"
  install_kind_base "${root}"
  install_runtime "${root}"
  install_kubernetes "${root}"
  timed "component images" import_images "${root}"
  rm -f "${root}/etc/machine-id" "${root}/var/lib/dbus/machine-id" # kind's entrypoint makes one per node
  touch "${root}/etc/machine-id"
  # kind's image also has STOPSIGNAL SIGRTMIN+3 (systemd's "halt"), which
  # `docker import` cannot set; kind removes nodes with `docker rm -f` anyway.
  log "importing the root file system into Docker as ${name}"
  tar -C "${root}" --numeric-owner -cf - . |
    docker import \
      --change 'ENV container=docker' \
      --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' \
      --change "LABEL io.fleetjob.kind-node.inputs=${key}" \
      - "${name}" >/dev/null
}

# install_kind_base copies kind's base image files with the modes its
# Dockerfile gives them and runs its Dockerfile steps in a chroot.
install_kind_base() {
  local root="$1" files f
  files="$(kind_base_files)"
  install -d -m 0755 "${root}/kind/bin" "${root}/LICENSES" "${root}/etc/containerd" \
    "${root}/etc/default" "${root}/etc/sysctl.d" "${root}/etc/systemd/system/kubelet.service.d"
  install -m 0755 "${files}"/usr/local/bin/* "${root}/usr/local/bin/"
  (cd "${files}/kind" && find . -type f ! -path './bin/*' -exec install -D -m 0644 {} "${root}/kind/{}" \;)
  install -m 0755 "${files}"/kind/bin/* "${root}/kind/bin/"
  install -m 0644 "${files}"/LICENSES/* "${root}/LICENSES/"
  for f in "${files}"/etc/*; do [[ -f "${f}" ]] && install -m 0644 "${f}" "${root}/etc/"; done
  install -m 0644 "${files}"/etc/containerd/* "${root}/etc/containerd/"
  install -m 0644 "${files}"/etc/default/* "${root}/etc/default/"
  install -m 0644 "${files}"/etc/sysctl.d/* "${root}/etc/sysctl.d/"
  for f in "${files}"/etc/systemd/system/*; do [[ -f "${f}" ]] && install -m 0644 "${f}" "${root}/etc/systemd/system/"; done
  install -m 0644 "${files}"/etc/systemd/system/kubelet.service.d/* "${root}/etc/systemd/system/kubelet.service.d/"

  # Our entrypoint runs first (see hack/kind/node/entrypoint), then kind's.
  mv "${root}/usr/local/bin/entrypoint" "${root}/usr/local/bin/kind-entrypoint"
  install -m 0755 "${HERE}/node/entrypoint" "${root}/usr/local/bin/entrypoint"

  # kind's Dockerfile RUN steps (the package installation is mmdebstrap's).
  chroot "${root}" /bin/bash -ec '
    find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete
    rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
      /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
      /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*
    echo "ReadKMsg=no" >>/etc/systemd/journald.conf
    ln -sf /usr/lib/systemd/systemd /sbin/init
    systemctl enable kubelet.service containerd.service undo-mount-hacks.service 2>/dev/null
    systemctl mask systemd-binfmt.service 2>/dev/null
    mkdir -p /etc/kubernetes/manifests
  '
}

# install_runtime installs containerd (ours), runc and the CNI plugins
# (Debian's) and fleetjob's containerd configuration.
install_runtime() {
  local root="$1" b
  local config="${root}/etc/containerd/config.toml"
  for b in "${CONTAINERD_BINS[@]}"; do install_stripped "${CONTAINERD_BIN}/${b}" "${root}/usr/local/bin/${b}"; done
  # As kind's Dockerfile: containerd's default spec plus kind's hook.
  "${CONTAINERD_BIN}/ctr" oci spec |
    chroot "${root}" jq '.hooks.createContainer[.hooks.createContainer| length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' |
    chroot "${root}" jq 'del(.process.rlimits)' >"${root}/etc/containerd/cri-base.json"
  # Debian installs the CNI plugins in /usr/lib/cni; kind's config looks in /opt/cni/bin.
  mkdir -p "${root}/opt/cni" "${root}/etc/cni/net.d"
  ln -sfn /usr/lib/cni "${root}/opt/cni/bin"

  grep -q '^  restrict_oom_score_adj = false$' "${config}" || die "kind's containerd config changed: no restrict_oom_score_adj = false"
  sed -i 's/^  restrict_oom_score_adj = false$/  restrict_oom_score_adj = true/' "${config}"
  local pause
  pause="$(kubeadm_image pause)"
  sed -i "s|^  sandbox_image = .*|  sandbox_image = \"${pause}\"|" "${config}"
  cat "${HERE}/node/containerd-cni.toml" >>"${config}"
  install -m 0644 "${HERE}/node/cni.conflist.tmpl" "${root}/etc/containerd/cni.conflist.tmpl"
}

install_kubernetes() {
  local root="$1" b
  for b in "${NODE_BINS[@]}"; do install_stripped "${K8S_BIN}/${b}" "${root}/usr/bin/${b}"; done
  printf '%s' "${K8S_VERSION}" >"${root}/kind/version"
  install -D -m 0644 "${HERE}/node/default-cni.yaml" "${root}/kind/manifests/default-cni.yaml"
  # No default-storage.yaml: kind then applies its legacy host-path
  # StorageClass, which needs no image (local-path-provisioner would).
}

# install_stripped installs the binary $1 as $2 without its symbol tables and
# debug information: the Kubernetes binaries are built unstripped (to share
# the build cache, see the Makefile), and stripped they make the node image
# ~300 MB smaller. Go keeps what it needs at run time (pclntab).
install_stripped() {
  strip --strip-all -o "$2" "$1"
  chmod 0755 "$2"
}

# kubeadm_image prints the image kubeadm expects for the component $1.
kubeadm_image() {
  grep -E "/$1:" <<<"${KUBEADM_IMAGES}" || die "kubeadm ${K8S_VERSION} names no $1 image"
}

# import_images makes the component images and imports them into the root
# file system's containerd store.
import_images() {
  local root="$1" refs=() ref component
  for component in kube-apiserver kube-controller-manager kube-scheduler kube-proxy etcd pause; do
    ref="$(kubeadm_image "${component}")"
    make_component_image "${root}" "${component}" "${ref}"
    refs+=("${ref}")
  done
  docker save "${refs[@]}" -o "${WORK}/images.tar"
  docker rmi "${refs[@]}" >/dev/null # only the copies in the node are used
  start_containerd "${root}"
  # ctr warns on stderr that cgroup v1 is deprecated: kept out unless it fails.
  "${CONTAINERD_BIN}/ctr" --address "${WORK}/containerd.sock" -n k8s.io images import \
    --all-platforms --no-unpack --digests --label=io.cri-containerd.pinned=pinned "${WORK}/images.tar" \
    >/dev/null 2>"${WORK}/ctr.log" || { cat "${WORK}/ctr.log" >&2; die "ctr images import failed"; }
  local imported
  imported="$("${CONTAINERD_BIN}/ctr" --address "${WORK}/containerd.sock" -n k8s.io images ls -q 2>/dev/null)"
  for ref in "${refs[@]}"; do
    grep -qx "${ref}" <<<"${imported}" || die "${ref} missing in the node's containerd after the import"
  done
  stop_containerd
  rm -f "${WORK}/images.tar"
}

# make_component_image imports a FROM scratch image of the static binary of
# $2 (with, for kube-proxy, the netfilter tools it runs) into Docker as $3.
make_component_image() {
  local root="$1" component="$2" ref="$3" stage="${WORK}/image-${2}" entry
  mkdir -p "${stage}/usr/local/bin" "${stage}/tmp" "${stage}/etc"
  chmod 1777 "${stage}/tmp"
  echo 'root:x:0:0:root:/root:/sbin/nologin' >"${stage}/etc/passwd"
  echo 'root:x:0:' >"${stage}/etc/group"
  case "${component}" in
    pause)
      install -m 0755 "${PAUSE_BIN}" "${stage}/pause"
      entry=/pause
      ;;
    *)
      install_stripped "${K8S_BIN}/${component}" "${stage}/usr/local/bin/${component}"
      entry="/usr/local/bin/${component}"
      ;;
  esac
  if [[ "${component}" == kube-proxy ]]; then add_netfilter_tools "${root}" "${stage}"; fi
  tar -C "${stage}" --numeric-owner --owner=0 --group=0 -cf - . |
    docker import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change "ENTRYPOINT [\"${entry}\"]" \
      - "${ref}" >/dev/null
}

# add_netfilter_tools copies into the kube-proxy image what kube-proxy runs in
# nftables and in iptables mode: nft, the xtables multi-call binaries under
# every iptables name, conntrack, their shared libraries and the xtables
# extension modules, all from the node's own Debian packages.
add_netfilter_tools() {
  local root="$1" stage="$2" d
  for d in bin sbin lib lib64; do
    if [[ -L "${root}/${d}" ]]; then ln -sfn "$(readlink "${root}/${d}")" "${stage}/${d}"; fi
  done
  local tools=(/usr/sbin/nft /usr/sbin/xtables-nft-multi /usr/sbin/xtables-legacy-multi /usr/sbin/conntrack)
  local xtables=/usr/lib/x86_64-linux-gnu/xtables
  mkdir -p "${stage}${xtables}" "${stage}/usr/sbin"
  cp -a "${root}${xtables}/." "${stage}${xtables}/"
  local p
  for p in "${tools[@]}"; do cp "${root}$(chroot "${root}" readlink -f "${p}")" "${stage}${p}"; done
  # Resolved inside the root file system: some of its links are absolute and
  # would otherwise point at the host's libraries.
  local libs real
  local modules=("${root}${xtables}"/*.so)
  libs="$(for p in "${tools[@]}" "${modules[@]#"${root}"}"; do chroot "${root}" ldd "${p}"; done |
    awk '{for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i}' | sort -u)"
  for p in ${libs}; do
    real="$(chroot "${root}" readlink -f "${p}")"
    d="$(chroot "${root}" readlink -f "$(dirname "${p}")")"
    mkdir -p "${stage}${d}"
    cp "${root}${real}" "${stage}${d}/$(basename "${p}")"
  done
  local n
  for n in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore \
    iptables-nft iptables-nft-save iptables-nft-restore ip6tables-nft ip6tables-nft-save ip6tables-nft-restore; do
    ln -sf xtables-nft-multi "${stage}/usr/sbin/${n}"
  done
  for n in iptables-legacy iptables-legacy-save iptables-legacy-restore \
    ip6tables-legacy ip6tables-legacy-save ip6tables-legacy-restore; do
    ln -sf xtables-legacy-multi "${stage}/usr/sbin/${n}"
  done
}

# start_containerd runs containerd v2 on the host on the root file system's
# store (/var/lib/containerd), with its own socket and state, so the node's
# containerd later finds the images where it keeps its own. The CRI and NRI
# plugins are off (nothing runs here); the overlayfs snapshotter stays on, as
# without it the transfer service that `ctr images import` uses is missing.
start_containerd() {
  local root="$1"
  cat >"${WORK}/containerd.toml" <<EOF
version = 3
root = "${root}/var/lib/containerd"
state = "${WORK}/containerd-state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images", "io.containerd.podsandbox.controller.v1.podsandbox", "io.containerd.nri.v1.nri", "io.containerd.internal.v1.opt"]
[grpc]
  address = "${WORK}/containerd.sock"
[ttrpc]
  address = "${WORK}/containerd.sock.ttrpc"
EOF
  "${CONTAINERD_BIN}/containerd" --config "${WORK}/containerd.toml" >"${WORK}/containerd.log" 2>&1 &
  CONTAINERD_PID=$!
  local _
  for _ in $(seq 1 100); do
    if [[ -S "${WORK}/containerd.sock" ]] &&
      "${CONTAINERD_BIN}/ctr" --address "${WORK}/containerd.sock" version >/dev/null 2>&1; then
      return 0
    fi
    kill -0 "${CONTAINERD_PID}" 2>/dev/null || break
    sleep 0.1
  done
  cat "${WORK}/containerd.log" >&2
  die "containerd did not start"
}

stop_containerd() {
  kill "${CONTAINERD_PID}"
  wait "${CONTAINERD_PID}" || true
  CONTAINERD_PID=""
  rm -rf "${WORK}/containerd-state"
}

# clean removes the node images (~1 GB each) other than the one named in
# $KIND_DIR/node-image that no container uses (`docker rmi` refuses those).
# Not automatic: another checkout on the same Docker daemon may be about to
# use an image this one no longer names.
clean() {
  local keep="" img
  if [[ -s "${KIND_DIR}/node-image" ]]; then keep="$(cat "${KIND_DIR}/node-image")"; fi
  for img in $(docker images --format '{{.Repository}}:{{.Tag}}' "${IMAGE_REPO}"); do
    if [[ "${img}" != "${keep}" ]] && docker rmi "${img}" >/dev/null 2>&1; then log "removed ${img}"; fi
  done
}

main "$@"
