#!/usr/bin/env bash
# hack/kind/smoke.sh proves the offline kind images (`make kind-smoke`): one
# single-node cluster from bin/kind/node-image, the busybox image loaded, a pod
# run to Succeeded, a pod that reaches the kubernetes Service (kube-proxy and
# the CNI config), and the cluster deleted again, also on failure.
#
# The cluster config is the one the offline image needs: no kindnetd
# (disableDefaultCNI: containerd's CNI template does it), no CoreDNS (an image
# that would be pulled), kubeadm's preflight still skipped (kind's default;
# a patch replaces the whole list), and kubelet 1.36 allowed on cgroup v1.
set -o errexit -o nounset -o pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "${HERE}/../.." && pwd)"
K8S_VERSION="${K8S_VERSION:-v1.36.3}"
KUBECTL="${KUBECTL:-${REPO}/bin/k8s/${K8S_VERSION}/kubectl}"
KIND_DIR="${KIND_DIR:-${REPO}/bin/kind}"
CLUSTER="${KIND_SMOKE_CLUSTER:-fleetjob-kimg-test}"
PROXY_MODE="${KIND_SMOKE_PROXY_MODE:-nftables}"
BUSYBOX=registry.k8s.io/e2e-test-images/busybox:1.36.1-1

T0=${SECONDS}
log() { echo "smoke.sh [$((SECONDS - T0)) s]: $*" >&2; }
timed() {
  local name="$1" start=${SECONDS}
  shift
  "$@"
  log "${name}: $((SECONDS - start)) s"
}

WORK="$(mktemp -d "${TMPDIR:-/tmp}/fleetjob-kind-smoke.XXXXXX")"
cleanup() {
  local rc=$?
  if [[ ${rc} -ne 0 && -f "${WORK}/kubeconfig" ]]; then
    "${KUBECTL}" --kubeconfig "${WORK}/kubeconfig" get nodes,pods -A -o wide >&2 || true
  fi
  "${HERE}/kind.sh" delete cluster --name "${CLUSTER}" >/dev/null 2>&1 || true
  rm -rf "${WORK}"
  exit "${rc}"
}
trap cleanup EXIT

cat >"${WORK}/cluster.yaml" <<EOF
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
networking:
  disableDefaultCNI: true
  kubeProxyMode: ${PROXY_MODE}
nodes:
- role: control-plane
kubeadmConfigPatches:
- |
  kind: KubeletConfiguration
  failCgroupV1: false
- |
  kind: InitConfiguration
  skipPhases: [preflight, addon/coredns]
EOF

kubectl() { "${KUBECTL}" --kubeconfig "${WORK}/kubeconfig" "$@"; }

main() {
  local image
  image="$(cat "${KIND_DIR}/node-image")"
  log "cluster ${CLUSTER} from ${image}"
  timed "cluster create" "${HERE}/kind.sh" create cluster --name "${CLUSTER}" --image "${image}" \
    --config "${WORK}/cluster.yaml" --kubeconfig "${WORK}/kubeconfig" --wait 3m
  local nodes
  nodes="$(kubectl get nodes --no-headers | wc -l)"
  [[ "${nodes}" == 1 ]] || { log "want 1 node, got ${nodes}"; exit 1; }
  # What the image's entrypoint did (nothing where nodes run privileged).
  docker logs "${CLUSTER}-control-plane" 2>&1 | grep 'fleetjob:' >&2 || log "entrypoint: no read-only cgroup mount to fix"
  timed "busybox load" "${HERE}/kind.sh" load docker-image "${BUSYBOX}" --name "${CLUSTER}"
  # shellcheck disable=SC2016 # expanded by the pod's shell
  timed "busybox pod Succeeded" run_pod hello 'echo hello from $(hostname)'
  kubectl logs hello | grep -q '^hello from hello$'
  # The kubernetes Service through kube-proxy (its image's nft or iptables).
  # shellcheck disable=SC2016 # expanded by the pod's shell
  timed "pod reached the kubernetes Service" run_pod service \
    'echo | nc -w 5 "${KUBERNETES_SERVICE_HOST}" "${KUBERNETES_SERVICE_PORT}"'
  log "passed"
}

# run_pod runs the shell command $2 in a busybox pod named $1 and waits until
# it Succeeded.
run_pod() {
  kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: ${BUSYBOX}
    command: [sh, -c, '$2']
EOF
  if ! kubectl wait --for=jsonpath='{.status.phase}'=Succeeded "pod/$1" --timeout=120s >/dev/null; then
    kubectl describe pod "$1" >&2
    kubectl logs "$1" >&2 || true
    return 1
  fi
}

main "$@"
