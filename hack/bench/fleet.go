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

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// fleetSpec is the shape of one local kwok fleet: a hub and members
// member-1..N with nodes fake nodes each.
type fleetSpec struct {
	members, nodes int
	// registerLate starts the hub before any member is registered: the
	// phase registers them, to measure the hub without members first.
	registerLate bool
}

func (s fleetSpec) String() string {
	return fmt.Sprintf("%d member(s) × %d nodes", s.members, s.nodes)
}

// fleet is a running local fleet, as hack/fleet.sh brought it up.
type fleet struct {
	spec    fleetSpec
	dir     string
	hub     client.WithWatch
	members []*member
}

// member is one member cluster of the fleet.
type member struct {
	name       string
	kubeconfig string
	cs         kubernetes.Interface
	// nodes are the member's node names in name order: the order of
	// fleetjob's alphabetical batches, which the raw waves follow.
	nodes []string
}

var scheme = runtime.NewScheme()

func init() {
	utilruntime(clientgoscheme.AddToScheme(scheme))
	utilruntime(fleetv1.AddToScheme(scheme))
}

func utilruntime(err error) {
	if err != nil {
		panic(err)
	}
}

// fleetUp brings up a fresh fleet of spec in b.fleetDir with hack/fleet.sh
// (whose nodes come from hack/nodes, in parallel), after waiting for any
// other kwok fleet on the machine to end: two fleets compete for ports.
func (b *bench) fleetUp(ctx context.Context, spec fleetSpec) (*fleet, error) {
	if err := b.waitForOtherFleets(ctx); err != nil {
		return nil, err
	}
	// A fleet a previous run left behind in our directory is ours to end.
	if err := b.fleetDown(); err != nil {
		return nil, err
	}
	logf("fleet: bringing up a hub and %s in %s", spec, b.fleetDir)
	start := time.Now()
	env := []string{
		"FLEET_PROVIDER=kwok", "FLEET_DIR=" + b.fleetDir, "K8S_BIN=" + b.k8sBin(),
		"FLEET_MEMBERS=" + strconv.Itoa(spec.members), "FLEET_NODES=" + strconv.Itoa(spec.nodes),
		// kwok's built-in stages: no Stage objects to watch, pods finish at once.
		"FLEET_KWOK_CRDS=",
		// A loaded 2-core machine makes members miss lease renewals; with
		// leader election their controller-manager or scheduler would then
		// exit for good and the member's Jobs never finish.
		"FLEET_KWOK_EXTRA_ARGS=kube-controller-manager=leader-elect=false kube-scheduler=leader-elect=false",
	}
	if err := b.runEchoed(ctx, "fleet-up", env, filepath.Join(b.root, "hack", "fleet.sh"), "up"); err != nil {
		return nil, fmt.Errorf("hack/fleet.sh up (%s): %w", spec, err)
	}
	f, err := b.connect(ctx, spec)
	if err != nil {
		return nil, err
	}
	logf("fleet: up in %s", time.Since(start).Round(time.Second))
	return f, nil
}

// fleetDown deletes the fleet in b.fleetDir and every process it started.
// It runs on its own clock: it must also run after the bench was
// interrupted or timed out.
func (b *bench) fleetDown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env := []string{"FLEET_DIR=" + b.fleetDir, "K8S_BIN=" + b.k8sBin()}
	if err := b.runEchoed(ctx, "fleet-down", env, filepath.Join(b.root, "hack", "fleet.sh"), "down"); err != nil {
		return fmt.Errorf("hack/fleet.sh down (FLEET_DIR=%s): %w", b.fleetDir, err)
	}
	return nil
}

func (b *bench) k8sBin() string { return filepath.Join(b.root, "bin", "k8s", b.k8sVersion) }

// waitForOtherFleets polls, every 30 s up to --wait-fleet, until no
// process of another kwok fleet (one whose state is not in b.fleetDir)
// runs: the e2e suite may be using the machine.
func (b *bench) waitForOtherFleets(ctx context.Context) error {
	deadline := time.Now().Add(b.waitFleet)
	for {
		others := otherFleetProcesses(filepath.Join(b.fleetDir, "kwok") + "/")
		if len(others) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("another kwok fleet is still running after %s (%d processes, e.g. %s); stop it or raise --wait-fleet",
				b.waitFleet, len(others), others[0])
		}
		logf("fleet: another kwok fleet is running (%d processes, e.g. %s); waiting for it to end", len(others), others[0])
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(30 * time.Second):
		}
	}
}

// connect makes clients for the fleet's clusters and reads each member's
// nodes.
func (b *bench) connect(ctx context.Context, spec fleetSpec) (*fleet, error) {
	f := &fleet{spec: spec, dir: b.fleetDir}
	cfg, err := restConfig(f.kubeconfig("hub"), b.rawQPS, b.rawBurst)
	if err != nil {
		return nil, err
	}
	if f.hub, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	for i := 1; i <= spec.members; i++ {
		m := &member{name: fmt.Sprintf("member-%d", i), kubeconfig: f.kubeconfig(fmt.Sprintf("member-%d", i))}
		if cfg, err = restConfig(m.kubeconfig, b.rawQPS, b.rawBurst); err != nil {
			return nil, err
		}
		if m.cs, err = kubernetes.NewForConfig(cfg); err != nil {
			return nil, err
		}
		nodes, err := m.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing the nodes of %s: %w", m.name, err)
		}
		for _, n := range nodes.Items {
			m.nodes = append(m.nodes, n.Name)
		}
		slices.Sort(m.nodes)
		if len(m.nodes) != spec.nodes {
			return nil, fmt.Errorf("%s has %d nodes, want %d", m.name, len(m.nodes), spec.nodes)
		}
		f.members = append(f.members, m)
	}
	return f, nil
}

func (f *fleet) kubeconfig(cluster string) string { return filepath.Join(f.dir, cluster+".kubeconfig") }

// restConfig is a client of kubeconfig with the raw baseline's rate
// limits: the members run with --disable-qps-limits, so client-go's
// default 5 QPS would measure the client, not the member.
func restConfig(kubeconfig string, qps float64, burst int) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = float32(qps), burst
	return cfg, nil
}

// installCRDs applies the CRDs on the hub (server-side: the ClusterJob CRD
// is larger than client-side apply's last-applied annotation allows),
// waits until they are served, and binds the set default to the bench's
// namespace, as a fresh hub needs.
func (b *bench) installCRDs(ctx context.Context, f *fleet) error {
	kubectl := filepath.Join(b.k8sBin(), "kubectl")
	hub := "--kubeconfig=" + f.kubeconfig("hub")
	crds := filepath.Join(b.root, "config", "crd", "bases")
	if err := b.runLogged(ctx, "kubectl", nil, kubectl, hub, "apply", "--server-side", "--force-conflicts", "-f", crds); err != nil {
		return fmt.Errorf("installing the CRDs: %w", err)
	}
	// `kubectl wait` fails rather than waits while a new CRD has no
	// conditions yet, hence the retries.
	var err error
	for range 30 {
		if err = b.runLogged(ctx, "kubectl", nil, kubectl, hub, "wait", "--for=condition=Established",
			"crd/clusterjobs.fleetjob.io", "crd/memberruns.fleetjob.io", "crd/clustersets.fleetjob.io", "crd/clustersetbindings.fleetjob.io", "crd/memberclusters.fleetjob.io",
			"crd/fleetdisruptionbudgets.fleetjob.io", "--timeout=10s"); err == nil {
			tenancy := filepath.Join(b.root, "config", "samples", "tenancy", "default.yaml")
			if err := b.runLogged(ctx, "kubectl", nil, kubectl, hub, "apply", "--server-side", "-f", tenancy); err != nil {
				return fmt.Errorf("binding the cluster set default: %w", err)
			}
			return nil
		}
		if !sleep(ctx, time.Second) {
			break
		}
	}
	return fmt.Errorf("the fleetjob CRDs are not Established: %w", err)
}

// register registers every member with `kubectl fleetjob register`, as a
// user would: least-privilege credentials in the member, a registration
// labelled bench=true on the hub.
func (b *bench) register(ctx context.Context, f *fleet) error {
	if err := ensureHubNamespace(ctx, f.hub, fleetv1.DefaultWorkNamespace); err != nil {
		return err
	}
	for _, m := range f.members {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := b.runLogged(ctx, "register", nil, filepath.Join(b.root, "bin", "kubectl-fleetjob"),
			"--kubeconfig", f.kubeconfig("hub"), "register", m.name,
			"--member-kubeconfig", m.kubeconfig, "--member-context", m.name,
			"--label", benchLabel+"=true", "--label", "name="+m.name)
		cancel()
		if err != nil {
			return fmt.Errorf("registering %s: %w", m.name, err)
		}
	}
	logf("fleet: registered %d member(s)", len(f.members))
	return nil
}

// ensureHubNamespace creates the hub namespace of the registrations.
func ensureHubNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s on the hub: %w", name, err)
	}
	return nil
}
