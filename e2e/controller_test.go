//go:build e2e

/*
Copyright 2026 The fleetjob Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// controllerArgs are the hub controller's flags in the suite, on both
// providers.
var controllerArgs = []string{
	// A member that stops answering is noticed within about a second, not
	// the default 10 s, so that outage specs take seconds.
	"--member-health-interval=1s",
	// Long enough that reconnecting after a controller restart (about a
	// second) never counts a member as failed; short enough that a member
	// lost for good fails its run within a spec's deadline.
	"--unreachable-timeout=20s",
}

// engageTimeout bounds how long a (re)started controller may take to
// engage every member: connecting, an access review and a cache sync each,
// about a second on a loaded 2-core machine; the default connect timeout
// is a minute.
const engageTimeout = 90 * time.Second

// hubController is the hub controller under test. Only how it runs differs
// between providers: a local process on kwok, a Deployment on kind.
type hubController interface {
	// start starts the controller and waits until it engaged every member.
	start()
	// kill stops it at once, without a graceful shutdown.
	kill()
	running() bool
	// logs is everything the controller logged since the suite started.
	logs() string
}

func newHubController(f *fleet) hubController {
	if f.provider == providerKind {
		return &deployedHub{f: f}
	}
	h := &processHub{
		f:          f,
		bin:        envOr("FLEETJOB_HUB", filepath.Join(f.root, "bin", "fleetjob-hub")),
		logPath:    filepath.Join(f.dir, "e2e-hub.log"),
		pidPath:    filepath.Join(f.dir, "e2e-hub.pid"),
		kubeconfig: serviceAccountKubeconfig(f),
	}
	// One log per suite run.
	Expect(os.WriteFile(h.logPath, nil, 0o644)).To(Succeed())
	return h
}

// waitEngaged waits until the controller's log since its last start says
// every member is engaged. A controller that exits fails it at once, with
// its last log lines.
func waitEngaged(f *fleet, h hubController, logSinceStart func() string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		log := logSinceStart()
		if !h.running() {
			StopTrying("the hub controller exited; its last log lines:\n" + lastLines(log, 20)).Now()
		}
		lines := strings.Split(log, "\n")
		for _, m := range f.members {
			g.Expect(lines).To(ContainElement(And(ContainSubstring("Engaged member cluster"), ContainSubstring(fmt.Sprintf("%q", m.name)))),
				"the hub controller engaged %s", m.name)
		}
	}).WithTimeout(engageTimeout).WithPolling(250 * time.Millisecond).Should(Succeed())
}

// serviceAccountKubeconfig applies config/rbac on the hub and returns a
// kubeconfig for the ServiceAccount it binds, with a token from the
// TokenRequest API: the process hub runs with exactly the permissions a
// deployed one has, so a permission the code needs and config/rbac lacks
// fails the suite.
func serviceAccountKubeconfig(f *fleet) string {
	GinkgoHelper()
	ensureNamespace(f.hub, workNamespace)
	f.kubectlOK("hub", "apply", "--server-side", "-k", filepath.Join(f.root, "config", "rbac"))
	token := strings.TrimSpace(f.kubectlOK("hub", "create", "token", "fleetjob-hub", "-n", workNamespace, "--duration=24h"))
	cfg, err := clientcmd.LoadFromFile(f.kubeconfig("hub"))
	Expect(err).NotTo(HaveOccurred())
	ctx := cfg.Contexts[cfg.CurrentContext]
	Expect(ctx).NotTo(BeNil(), "the hub kubeconfig has a current context")
	cfg.AuthInfos = map[string]*clientcmdapi.AuthInfo{"fleetjob-hub": {Token: token}}
	ctx.AuthInfo = "fleetjob-hub"
	data, err := clientcmd.Write(*cfg)
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(f.dir, "e2e-hub-sa.kubeconfig")
	Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
	return path
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// processHub runs bin/fleetjob-hub as a child process, as hack/demo.sh
// does, logging to FLEET_DIR/e2e-hub.log (appended across restarts). Its
// pid is in FLEET_DIR/e2e-hub.pid, so that e2e/run.sh stops it even when
// the suite is killed.
type processHub struct {
	f                *fleet
	bin              string
	logPath, pidPath string
	// kubeconfig is the hub's identity: its ServiceAccount's.
	kubeconfig string
	// args are flags besides the suite's (controllerArgs), env variables
	// besides the suite's environment.
	args, env []string
	cmd       *exec.Cmd
	exited    chan struct{}
	// offset is the log's size when the current process started.
	offset int64
}

func (h *processHub) start() {
	GinkgoHelper()
	h.launch()
	waitEngaged(h.f, h, h.logSinceStart)
}

// launch starts the process, without waiting for it to engage anything.
func (h *processHub) launch() {
	GinkgoHelper()
	Expect(h.running()).To(BeFalse(), "the hub controller is already running")
	logFile, err := os.OpenFile(h.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	Expect(err).NotTo(HaveOccurred())
	defer logFile.Close()
	fmt.Fprintf(logFile, "=== e2e: starting the hub controller at %s\n", time.Now().Format(time.RFC3339Nano))
	info, err := logFile.Stat()
	Expect(err).NotTo(HaveOccurred())
	h.offset = info.Size()
	args := append([]string{"--kubeconfig", h.kubeconfig,
		"--metrics-bind-address=0", "--health-probe-bind-address=0"}, controllerArgs...)
	h.cmd = exec.Command(h.bin, append(args, h.args...)...)
	h.cmd.Env = append(os.Environ(), h.env...)
	h.cmd.Stdout, h.cmd.Stderr = logFile, logFile
	// Dies with the suite, even when the suite is killed.
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	Expect(h.cmd.Start()).To(Succeed(), "starting %s (built by `make build`)", h.bin)
	Expect(os.WriteFile(h.pidPath, []byte(fmt.Sprint(h.cmd.Process.Pid)), 0o644)).To(Succeed())
	exited := make(chan struct{})
	h.exited = exited
	cmd := h.cmd
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	GinkgoWriter.Printf("Started the hub controller, pid %d, log %s\n", h.cmd.Process.Pid, h.logPath)
}

// kill sends SIGKILL: no deferred work, no graceful shutdown.
func (h *processHub) kill() {
	GinkgoHelper()
	if !h.running() {
		return
	}
	Expect(h.cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
	Eventually(h.exited).WithTimeout(10 * time.Second).Should(BeClosed())
	_ = os.Remove(h.pidPath)
	GinkgoWriter.Printf("Killed the hub controller, pid %d\n", h.cmd.Process.Pid)
}

func (h *processHub) running() bool {
	if h.exited == nil {
		return false
	}
	select {
	case <-h.exited:
		return false
	default:
		return true
	}
}

func (h *processHub) logs() string {
	b, _ := os.ReadFile(h.logPath)
	return string(b)
}

func (h *processHub) logSinceStart() string {
	b, _ := os.ReadFile(h.logPath)
	if int64(len(b)) < h.offset {
		return ""
	}
	return string(b[h.offset:])
}

// deployedHub is the hub controller as `make deploy` installs it on a kind
// hub (e2e/run.sh deploys it, then scales it to 0 until the members are
// registered). It is started by scaling the Deployment up with the suite's
// flags and killed by scaling it down and force-deleting its pod.
type deployedHub struct {
	f *fleet
	// previous holds the logs of the pods killed so far.
	previous strings.Builder
}

const (
	hubDeployment = "deployment/fleetjob-hub"
	hubPods       = "app.kubernetes.io/name=fleetjob,app.kubernetes.io/component=hub"
)

func (h *deployedHub) start() {
	GinkgoHelper()
	// The Deployment's own flags, leader election included as users run
	// it: a force-deleted pod's container may outlive its API object by
	// seconds, and only the lease keeps it from acting beside the next
	// pod. A start after kill waits out the killed pod's lease (15 s).
	args := append([]string{"--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8443"}, controllerArgs...)
	patch, err := json.Marshal([]map[string]any{{"op": "replace", "path": "/spec/template/spec/containers/0/args", "value": args}})
	Expect(err).NotTo(HaveOccurred())
	h.f.kubectlOK("hub", "-n", workNamespace, "patch", hubDeployment, "--type=json", "-p", string(patch))
	h.f.kubectlOK("hub", "-n", workNamespace, "scale", hubDeployment, "--replicas=1")
	h.f.kubectlOK("hub", "-n", workNamespace, "rollout", "status", hubDeployment, "--timeout=120s")
	waitEngaged(h.f, h, h.currentLogs)
}

func (h *deployedHub) kill() {
	GinkgoHelper()
	h.previous.WriteString(h.currentLogs())
	h.f.kubectlOK("hub", "-n", workNamespace, "scale", hubDeployment, "--replicas=0")
	h.f.kubectlOK("hub", "-n", workNamespace, "delete", "pod", "-l", hubPods, "--grace-period=0", "--force", "--ignore-not-found")
	Eventually(h.running).WithTimeout(30 * time.Second).Should(BeFalse())
}

// hubLease is the hub's leader election Lease (cmd/fleetjob-hub), in the
// namespace of its pod.
const hubLease = "fleetjob-hub.fleetjob.io"

// deletePod deletes the hub's pod as a person would (kubectl delete pod:
// SIGTERM and the grace period), and returns how long after the deletion
// another pod of the Deployment held the leader lease.
func (h *deployedHub) deletePod() time.Duration {
	GinkgoHelper()
	old := strings.TrimPrefix(strings.TrimSpace(h.f.kubectlOK("hub", "-n", workNamespace, "get", "pods", "-l", hubPods, "-o", "name")), "pod/")
	Expect(old).NotTo(BeEmpty())
	Expect(old).NotTo(ContainSubstring("\n"), "one hub pod runs")
	Expect(h.leaseHolder()).To(HavePrefix(old+"_"), "the hub pod %s holds the lease", old)
	h.previous.WriteString(h.currentLogs())
	deleted := time.Now()
	h.f.kubectlOK("hub", "-n", workNamespace, "delete", "pod", old, "--wait=false")
	var holder string
	Eventually(func(g Gomega) {
		var err error
		holder, err = h.leaseHolder()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(holder).NotTo(BeEmpty())
		g.Expect(holder).NotTo(HavePrefix(old + "_"))
	}).WithTimeout(engageTimeout).WithPolling(100*time.Millisecond).Should(Succeed(), "another hub pod takes the lease over from %s", old)
	took := time.Since(deleted)
	GinkgoWriter.Printf("The lease went from the deleted pod %s to %s %s after the deletion\n", old, holder, took.Round(100*time.Millisecond))
	return took
}

// leaseHolder is the hub lease's holderIdentity (<pod name>_<uuid>), empty
// when none or no lease.
func (h *deployedHub) leaseHolder() (string, error) {
	lease := &coordinationv1.Lease{}
	err := h.f.hub.Get(ctx, client.ObjectKey{Namespace: workNamespace, Name: hubLease}, lease)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	return ptr.Deref(lease.Spec.HolderIdentity, ""), err
}

func (h *deployedHub) running() bool {
	out, err := h.f.run("hub", "", "-n", workNamespace, "get", "pods", "-l", hubPods, "-o", "name")
	return err != nil || strings.TrimSpace(out) != ""
}

func (h *deployedHub) currentLogs() string {
	out, _ := h.f.run("hub", "", "-n", workNamespace, "logs", "-l", hubPods, "--tail=-1")
	return out
}

func (h *deployedHub) logs() string { return h.previous.String() + h.currentLogs() }

// logMark is a point in the controller's log; waitLogged looks after it.
func logMark() int { return len(hub.logs()) }

// waitLogged waits until a line after mark contains every one of parts.
func waitLogged(mark int, parts ...string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		log := hub.logs()
		g.Expect(len(log)).To(BeNumerically(">=", mark))
		matchers := []types.GomegaMatcher{}
		for _, p := range parts {
			matchers = append(matchers, ContainSubstring(p))
		}
		g.Expect(strings.Split(log[mark:], "\n")).To(ContainElement(And(matchers...)))
	}).WithTimeout(engageTimeout).Should(Succeed(), "the hub controller logs %q", parts)
}
