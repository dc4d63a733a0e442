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
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

const (
	providerKwok = "kwok"
	providerKind = "kind"

	// workNamespace is where registrations live on the hub and where Jobs
	// run in the members (the default of both).
	workNamespace = fleetv1.DefaultWorkNamespace
	// testNamespace holds the suite's ClusterJobs on the hub.
	testNamespace = "default"
	// suiteLabel is on every registration of the suite: makeClusterJob
	// selects on it.
	suiteLabel = "env"
	suiteValue = "e2e"
	// memberNameLabel is on every registration, value the member's name, so
	// that a ClusterJob can select one member.
	memberNameLabel = "name"

	// pluginTimeout bounds one run of kubectl fleetjob. register makes a
	// few dozen requests (apply, token, access reviews): seconds, even on
	// a loaded 2-core machine.
	pluginTimeout = time.Minute
)

// fleet is the hub and members e2e/run.sh brought up, as it describes them
// in the environment.
type fleet struct {
	// provider is kwok or kind (E2E_PROVIDER).
	provider string
	// dir holds <cluster>.kubeconfig (FLEET_DIR).
	dir string
	// kubectl is the kubectl binary (KUBECTL).
	kubectl string
	// root is the repository.
	root string
	// plugin is the kubectl fleetjob binary (KUBECTL_FLEETJOB), which
	// registers the members as a user would.
	plugin string
	// artifacts is where failed specs leave what they saw (ARTIFACTS).
	artifacts string
	hub       client.WithWatch
	members   []*member
	// stopped are the members' API servers stopAPIServer stopped (kwok).
	stopped map[string]*process
}

// member is one member cluster of the fleet.
type member struct {
	name string
	// kubeconfig is the suite's kubeconfig of the member, with one context
	// named after it: register's --member-context.
	kubeconfig string
	// server is register's --server, the member's API server as the hub
	// controller reaches it: on kind the in-Docker-network address, as the
	// controller runs in the hub cluster; empty on kwok, where the address
	// in kubeconfig serves the controller too.
	server string
	// controlPlane is the name of the control plane's node, on kind also
	// its container's: stopAPIServer cuts the hub off there.
	controlPlane string
	client       client.WithWatch
}

var scheme = runtime.NewScheme()

// loadFleet reads the fleet's description from the environment and
// connects to every cluster.
func loadFleet() *fleet {
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(fleetv1.AddToScheme(scheme)).To(Succeed())
	root, err := filepath.Abs("..")
	Expect(err).NotTo(HaveOccurred())
	f := &fleet{
		provider:  envOr("E2E_PROVIDER", providerKwok),
		dir:       os.Getenv("FLEET_DIR"),
		kubectl:   envOr("KUBECTL", "kubectl"),
		root:      root,
		plugin:    envOr("KUBECTL_FLEETJOB", filepath.Join(root, "bin", "kubectl-fleetjob")),
		artifacts: envOr("ARTIFACTS", filepath.Join(root, "artifacts", "e2e")),
		stopped:   map[string]*process{},
	}
	Expect(f.provider).To(BeElementOf(providerKwok, providerKind), "E2E_PROVIDER")
	Expect(f.dir).NotTo(BeEmpty(), "FLEET_DIR must name the fleet's directory: run the suite with `make e2e`")
	Expect(f.plugin).To(BeARegularFile(), "the kubectl plugin: `make e2e` builds it (make build)")
	f.hub = newClient(f.kubeconfig("hub"))
	clusters, err := os.ReadFile(filepath.Join(f.dir, "clusters"))
	Expect(err).NotTo(HaveOccurred(), "the fleet lists its clusters in FLEET_DIR/clusters")
	for _, name := range strings.Fields(string(clusters)) {
		if name == "hub" {
			continue
		}
		m := &member{name: name, kubeconfig: f.kubeconfig(name)}
		if f.provider == providerKind {
			m.server = serverOf(f.kubeconfig(name + ".internal"))
		}
		m.client = newClient(m.kubeconfig)
		if f.provider == providerKind {
			m.controlPlane = controlPlaneOf(m)
		}
		f.members = append(f.members, m)
	}
	Expect(len(f.members)).To(BeNumerically(">=", 2), "the suite needs two members")
	return f
}

// controlPlaneOf is the name of m's control plane node.
func controlPlaneOf(m *member) string {
	GinkgoHelper()
	list := &corev1.NodeList{}
	Expect(m.client.List(ctx, list, client.HasLabels{"node-role.kubernetes.io/control-plane"})).To(Succeed())
	Expect(list.Items).To(HaveLen(1), "%s has one control plane node", m.name)
	return list.Items[0].Name
}

// Labels of the specs that run on one provider only. Each of them also
// skips itself on the other provider, saying why (only).
var (
	kwokOnly = Label("kwok-only")
	kindOnly = Label("kind-only")
)

// hubLogic labels the specs whose outcome is decided by the hub alone (the
// groups, their order, budgets, approvals, rollout, selection, admission):
// a member's kubelets only run a short container for them, and kwok's
// control planes are real API servers, schedulers and Job controllers.
// `make test` runs them on kwok only, which keeps the kind stage to what
// real kubelets change (pods, drain, logs, outages, the deployed hub);
// `make e2e-kind` runs them too.
var hubLogic = Label("hub-logic")

// only skips the spec unless the fleet is of provider, saying why.
func only(provider, why string) {
	if f.provider != provider {
		Skip(provider + " only: " + why)
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func (f *fleet) kubeconfig(cluster string) string {
	return filepath.Join(f.dir, cluster+".kubeconfig")
}

// serverOf returns the API server of kubeconfig's current context.
func serverOf(kubeconfig string) string {
	GinkgoHelper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	return cfg.Host
}

func newClient(kubeconfig string) client.WithWatch {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	// The recorders watch while the specs list; client-go's 5 QPS would
	// make the suite wait on itself.
	cfg.QPS, cfg.Burst = 100, 200
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// member returns the member called name.
func (f *fleet) member(name string) *member {
	for _, m := range f.members {
		if m.name == name {
			return m
		}
	}
	Fail("no member " + name)
	return nil
}

// run runs kubectl against cluster (hub or a member name) with stdin, and
// returns its output; the error carries stderr.
func (f *fleet) run(cluster string, stdin string, args ...string) (string, error) {
	cmd := exec.Command(f.kubectl, append([]string{"--kubeconfig", f.kubeconfig(cluster)}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// kubectl runs kubectl against cluster and expects it to succeed.
func (f *fleet) kubectlOK(cluster string, args ...string) string {
	GinkgoHelper()
	out, err := f.run(cluster, "", args...)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// installCRDs applies the CRDs and the admission policies on the
// hub, waits until they are served, and creates what a fresh hub needs:
// the set default bound to namespace default. Server-side: the ClusterJob
// CRD is larger than client-side apply's last-applied annotation allows.
func (f *fleet) installCRDs() {
	f.kubectlOK("hub", "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(f.root, "config", "crd", "bases"))
	// `kubectl wait` fails rather than waits while a new CRD has no
	// conditions yet, hence the retries.
	Eventually(func() error {
		_, err := f.run("hub", "", "wait", "--for=condition=Established", "crd/clusterjobs.fleetjob.io", "crd/memberruns.fleetjob.io",
			"crd/clustersets.fleetjob.io", "crd/clustersetbindings.fleetjob.io", "crd/memberclusters.fleetjob.io",
			"crd/fleetdisruptionbudgets.fleetjob.io", "--timeout=10s")
		return err
	}).WithTimeout(time.Minute).Should(Succeed())
	// Both admission policies, as config/default installs them: the hub
	// runs as its ServiceAccount here, the only user the MemberRun policy
	// lets create MemberRuns.
	f.kubectlOK("hub", "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(f.root, "config", "admission", "clusterset_bind.yaml"),
		"-f", filepath.Join(f.root, "config", "admission", "memberruns.yaml"))
	f.kubectlOK("hub", "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(f.root, "config", "samples", "tenancy", "default.yaml"))
}

// ensureNamespace creates the namespace in c unless it exists.
func ensureNamespace(c client.Client, name string) {
	GinkgoHelper()
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}

// fleetjob runs kubectl fleetjob against the hub, expects it to succeed
// and returns its output, which also goes to the GinkgoWriter, and into
// the failure.
func (f *fleet) fleetjob(args ...string) string {
	GinkgoHelper()
	run, cancel := context.WithTimeout(ctx, pluginTimeout)
	defer cancel()
	args = append([]string{"--kubeconfig", f.kubeconfig("hub")}, args...)
	cmd := exec.CommandContext(run, f.plugin, args...)
	// A child that inherited the output pipes must not outlive the timeout.
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	line := "kubectl fleetjob " + strings.Join(args, " ")
	GinkgoWriter.Printf("$ %s\n%s", line, out)
	if err != nil && run.Err() != nil {
		err = fmt.Errorf("%w (timeout %s)", err, pluginTimeout)
	}
	Expect(err).NotTo(HaveOccurred(), "%s:\n%s", line, out)
	return string(out)
}

// register registers m with kubectl fleetjob, as a user would: least-
// privilege credentials in the member, a registration labelled env=e2e and
// name=<member> on the hub. It also creates the member's work namespace.
// Each run mints a new token, which changes the Secret and makes the hub
// reconnect to m: restoreFleet runs it only for a member not registered.
//
// A spec that needs m registered with deliberately different (broken or
// wider) credentials may write the Secret itself: register only writes
// credentials it verified.
func (f *fleet) register(m *member) {
	GinkgoHelper()
	args := []string{"register", m.name, "--member-kubeconfig", m.kubeconfig, "--member-context", m.name,
		"--label", suiteLabel + "=" + suiteValue, "--label", memberNameLabel + "=" + m.name}
	if m.server != "" {
		args = append(args, "--server", m.server)
	}
	f.fleetjob(args...)
}

// registered tells whether the hub holds m's registration as register
// writes it: an intact registration need not (and should not) be renewed.
func (f *fleet) registered(m *member) bool {
	GinkgoHelper()
	secret := &corev1.Secret{}
	err := f.hub.Get(ctx, client.ObjectKey{Namespace: workNamespace, Name: m.name}, secret)
	if apierrors.IsNotFound(err) {
		return false
	}
	Expect(err).NotTo(HaveOccurred())
	l := secret.Labels
	return l[fleetv1.RegistrationLabel] == "true" && l[suiteLabel] == suiteValue && l[memberNameLabel] == m.name
}

// unregister deletes m's registration with kubectl fleetjob. Without
// --purge: the member keeps its work namespace (and the recorders' watch
// of it), and register makes it usable again.
func (f *fleet) unregister(m *member) {
	GinkgoHelper()
	f.fleetjob("unregister", m.name)
}

// stopAPIServer makes m's API server stop answering the hub and the
// suite, as in an API server outage. On kwok the kube-apiserver process is
// killed (and its command line kept for startAPIServer): etcd, the
// controllers, the scheduler and kwok go on. On kind a firewall rule in the
// control plane's container resets every connection to port 6443 that
// comes from outside it (the hub, this machine, the workers' kubelets),
// which the hub sees exactly as a stopped API server, while the member's
// own controllers, on the container's loopback, go on. Stopping the static
// pod instead would take the kubelet 10-30 s each way, longer than the
// outage specs' unreachable timeout. Restarting the whole control plane
// would make the member's controller-manager wait out its predecessor's
// leader lease (15 s or more) before any Job finishes again.
func (f *fleet) stopAPIServer(m *member) {
	GinkgoHelper()
	if f.provider == providerKind {
		f.runToolInput(kindOutageRules, "docker", "exec", "-i", m.controlPlane, "nft", "-f", "-")
	} else {
		p := findClusterProcess(filepath.Join(f.dir, "kwok", "clusters", m.name)+"/", "kube-apiserver")
		Expect(p).NotTo(BeNil(), "the kube-apiserver process of %s", m.name)
		Expect(syscall.Kill(p.pid, syscall.SIGKILL)).To(Succeed())
		Eventually(func() bool { return processGone(p.pid) }).WithTimeout(10*time.Second).Should(BeTrue(), "kube-apiserver of %s exited", m.name)
		f.stopped[m.name] = p
	}
	Eventually(func() error { return m.client.List(ctx, &corev1.NodeList{}, client.Limit(1)) }).Should(HaveOccurred(), "%s stops answering", m.name)
	GinkgoWriter.Printf("Stopped the kube-apiserver of %s\n", m.name)
}

// kindOutageTable is the nftables table of kindOutageRules, deleted to end
// the outage.
const kindOutageTable = "fleetjob-e2e-outage"

// kindOutageRules reset every TCP connection to the API server's port that
// arrives on the node container's network interface (not on loopback).
const kindOutageRules = `table inet ` + kindOutageTable + ` {
	chain input {
		type filter hook input priority -10;
		iifname != "lo" tcp dport 6443 reject with tcp reset
	}
}
`

// startAPIServer undoes stopAPIServer and waits until m answers again. It
// does nothing when m's API server was not stopped.
func (f *fleet) startAPIServer(m *member) {
	GinkgoHelper()
	if f.provider == providerKind {
		f.runTool("docker", "exec", m.controlPlane, "sh", "-c",
			"! nft list table inet "+kindOutageTable+" >/dev/null 2>&1 || nft delete table inet "+kindOutageTable)
	} else if p := f.stopped[m.name]; p != nil {
		p.start()
		delete(f.stopped, m.name)
	}
	Eventually(func() error { return m.client.List(ctx, &corev1.NodeList{}, client.Limit(1)) }).Should(Succeed(), "%s answers again", m.name)
	GinkgoWriter.Printf("Started the kube-apiserver of %s again\n", m.name)
}

// process is a process of the fleet as it was started.
type process struct {
	pid  int
	args []string
	dir  string
	log  string
}

// findClusterProcess finds the process named base (kube-apiserver, kwok,
// ...) whose command line mentions dir.
func findClusterProcess(dir, base string) *process {
	GinkgoHelper()
	entries, err := os.ReadDir("/proc")
	Expect(err).NotTo(HaveOccurred())
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.Contains(raw, []byte(dir)) {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if filepath.Base(args[0]) != base {
			continue
		}
		p := &process{pid: pid, args: args}
		p.dir, _ = os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		p.log, _ = os.Readlink(fmt.Sprintf("/proc/%d/fd/1", pid))
		return p
	}
	return nil
}

// start starts the process again, detached like kwokctl starts it, so that
// `hack/fleet.sh down` finds and stops it.
func (p *process) start() {
	GinkgoHelper()
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Dir = p.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if p.log != "" {
		out, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		Expect(err).NotTo(HaveOccurred())
		defer out.Close()
		cmd.Stdout, cmd.Stderr = out, out
	}
	Expect(cmd.Start()).To(Succeed())
	go func() { _ = cmd.Wait() }()
}

// processGone tells whether pid has exited (a zombie has).
func processGone(pid int) bool {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	return err != nil || bytes.Contains(status, []byte("\nState:\tZ"))
}

// runTool runs a fleet tool (docker, hack/fleet.sh) and expects it to
// succeed. Its output goes to FLEET_DIR/e2e-tools.log.
func (f *fleet) runTool(name string, args ...string) {
	GinkgoHelper()
	f.runToolInput("", name, args...)
}

// runToolInput is runTool with stdin.
func (f *fleet) runToolInput(stdin, name string, args ...string) {
	GinkgoHelper()
	out, err := os.OpenFile(filepath.Join(f.dir, "e2e-tools.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	Expect(err).NotTo(HaveOccurred())
	defer out.Close()
	cmd := exec.Command(name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), out, out
	Expect(cmd.Run()).To(Succeed(), "%s %s (output in %s)", name, strings.Join(args, " "), out.Name())
}
