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

// Command fleetjob-hub runs the fleetjob hub controller: it runs ClusterJobs
// stored on the hub across the member clusters registered there.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	// The hub image is FROM scratch: maintenance windows name IANA time
	// zones, so their database is built in.
	_ "time/tzdata"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/clusters"
	"github.com/fleetjob/fleetjob/hub/controller"
	"github.com/fleetjob/fleetjob/hub/shard"
	"github.com/fleetjob/fleetjob/pkg/version"
)

func main() {
	var (
		serve     serving
		namespace string
		members   clusters.Options
		opts      = controller.DefaultOptions()
		defaults  = controller.DefaultOptions()
	)
	flag.StringVar(&serve.metrics.BindAddress, "metrics-bind-address", ":8443", "Address of the metrics endpoint; 0 disables it.")
	flag.BoolVar(&serve.metrics.Secure, "metrics-secure", true, "Serve metrics over HTTPS to callers the hub's API server authenticates and authorizes for get on /metrics (a token bound to ClusterRole fleetjob-metrics-reader); false: plain HTTP to anyone.")
	flag.StringVar(&serve.metrics.CertDir, "metrics-cert-path", "", "Directory of the metrics serving certificate and key (reloaded on change); empty: a self-signed certificate made at start.")
	flag.StringVar(&serve.metrics.CertName, "metrics-cert-name", "tls.crt", "File name of the metrics serving certificate in --metrics-cert-path.")
	flag.StringVar(&serve.metrics.KeyName, "metrics-cert-key", "tls.key", "File name of the metrics serving key in --metrics-cert-path.")
	flag.StringVar(&serve.probeAddr, "health-probe-bind-address", ":8081", "Address of the health probes.")
	flag.StringVar(&serve.pprofAddr, "pprof-bind-address", "", "Address of the Go profiler (net/http/pprof); empty disables it.")
	flag.BoolVar(&serve.leaderElect, "leader-elect", false, "Elect a leader, so that only one replica acts.")
	flag.BoolVar(&serve.shard, "shard", false, "Experimental: divide the member clusters among the hub's replicas, each connecting to and running the runs of its share, the leader deciding for the fleet. Needs --leader-elect, the replica's name in POD_NAME, get, list, create and update on Leases, and get, list, watch, create and update on ConfigMaps in the registration namespace (config/sharded).")
	flag.StringVar(&namespace, "registration-namespace", defaults.RegistrationNamespace, "Hub namespace of the member registration Secrets.")
	// A group's Jobs are created in a burst: at 100 QPS a 1,000-node group
	// took 8 s to start, the Jobs themselves less than that on kwok. The
	// member's API priority and fairness still protects it.
	qps := flag.Float64("member-qps", 500, "Requests per second to each member API server.")
	flag.IntVar(&members.Burst, "member-burst", 1000, "Request burst to each member API server.")
	flag.DurationVar(&members.RequestTimeout, "member-request-timeout", 30*time.Second, "Timeout of one request to a member.")
	flag.DurationVar(&members.ConnectTimeout, "member-connect-timeout", defaults.ConnectTimeout, "Time allowed to check, sync and engage a member before retrying it.")
	flag.DurationVar(&members.HealthInterval, "member-health-interval", 10*time.Second, "How often engaged members are probed.")
	flag.DurationVar(&opts.UnreachableTimeout, "unreachable-timeout", defaults.UnreachableTimeout, "How long a started member may stay unreachable before it counts as failed (and how long it may hold a deletion).")
	flag.DurationVar(&opts.MemberTimeout, "member-timeout", defaults.MemberTimeout, "Time allowed for the work in one member per reconcile.")
	flag.DurationVar(&opts.MemberErrorTimeout, "member-error-timeout", defaults.MemberErrorTimeout, "How long the hub's work in a reachable member may keep failing (retried with backoff up to 30s) before the member counts as failed, and how long a run may keep failing to create a selected cluster's MemberRun before it fails MemberRunsNotCreated.")
	flag.DurationVar(&opts.EmptySelectionGrace, "empty-selection-grace", defaults.EmptySelectionGrace, "How long a ClusterJob that selects no cluster waits for registrations before it fails NoClusters.")
	flag.IntVar(&opts.MemberWorkers, "member-workers", defaults.MemberWorkers, "MemberRuns reconciled at once: how many members the hub works in at a time.")
	flag.IntVar(&opts.Parallelism, "parallelism", defaults.Parallelism, "Hub API writes one ClusterJob's reconcile sends at once (its MemberRuns' creates and updates).")
	flag.StringVar(&opts.HubID, "hub-id", defaults.HubID, "Identity of this hub, a label value set on everything it creates in members; it only ever deletes objects with its own. Default: the UID of the hub's kube-system namespace. Never change it while runs exist.")
	flag.DurationVar(&opts.GCInterval, "gc-interval", defaults.GCInterval, "How often every reachable member is swept for this hub's orphaned Jobs and plans (besides each reconnect).")
	flag.DurationVar(&opts.EndedRunTTL, "ended-run-ttl", defaults.EndedRunTTL, "How long an ended ClusterJob (Completed or Failed) without spec.ttlSecondsAfterFinished is kept, counted from its status.completionTime, before the hub deletes it with its Jobs and pods in every member; 0 keeps it until someone deletes it.")
	tenancy := flag.String("tenancy", "on", "on: a ClusterJob reaches only the clusters of the cluster sets bound to its namespace (ClusterSetBinding), with its pod template checked against each set's Pod Security level; off: any ClusterJob may run any template on every registered cluster (single-admin hubs).")
	showVersion := flag.Bool("version", false, "Print the version (the release, the commit, the Go release) and exit.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	if *showVersion {
		fmt.Println(version.Get().String())
		return
	}
	setLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	members.QPS, members.Namespace, opts.RegistrationNamespace = float32(*qps), namespace, namespace
	opts.ConnectTimeout = members.ConnectTimeout
	opts.Tenancy = *tenancy == "on"
	err := errors.Join(validate(members, opts), validateShard(serve, os.Getenv("POD_NAME")))
	metricsOpts, metricsErr := serve.metrics.Options()
	err = errors.Join(err, metricsErr)
	if *tenancy != "on" && *tenancy != "off" {
		err = errors.Join(err, fmt.Errorf("--tenancy must be on or off, not %q", *tenancy))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fleetjob-hub: %v\n", err)
		os.Exit(2)
	}
	if err := run(serve, metricsOpts, members, opts); err != nil {
		ctrl.Log.Error(err, "Running the hub controller failed")
		os.Exit(1)
	}
}

// serving is what the hub process serves besides reconciling, and whether
// it elects a leader first.
type serving struct {
	metrics              controller.MetricsServing
	probeAddr, pprofAddr string
	leaderElect          bool
	// shard divides the members among the replicas (--shard).
	shard bool
}

// setLogger makes logger the process's only logger: controller-runtime's,
// and klog's, which client-go and the leader election write to; without
// it their lines would come out as klog text beside the JSON ones.
func setLogger(logger logr.Logger) {
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
}

func run(serve serving, metricsOpts metricsserver.Options, members clusters.Options, opts controller.Options) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := fleetv1.AddToScheme(scheme); err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	cfg := ctrl.GetConfigOrDie()
	if opts.HubID == "" {
		id, err := hubID(ctx, cfg)
		if err != nil {
			return err
		}
		opts.HubID = id
	}
	var share *shard.Shard
	if serve.shard {
		// A client without a cache: the shard reads its Leases live, and a
		// cached read would start a Lease informer the hub has no right to.
		direct, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return err
		}
		share, err = shard.New(direct, direct, shard.Options{Namespace: members.Namespace, Identity: os.Getenv("POD_NAME")}, ctrl.Log.WithName("shard"))
		if err != nil {
			return err
		}
		members.Shard = share
	}
	provider := clusters.New(members)
	// No manager-level controller options here: multicluster controllers
	// ignore them, and a ReconciliationTimeout would leak into the
	// registration controller and cut members off.
	mgrOpts := mcmanager.Options{
		Scheme:                 scheme,
		Metrics:                metricsOpts,
		HealthProbeBindAddress: serve.probeAddr,
		PprofBindAddress:       serve.pprofAddr,
		Cache:                  controller.CacheOptions(members.Namespace),
	}
	if serve.leaderElect {
		// The lease lives in the hub's namespace, the registration
		// namespace (the pod's, as config/manager and the chart set it;
		// named, so that a hub run outside a cluster elects too). It is
		// released when the manager stops, once its reconciles ended or
		// its grace did; the group starts under way end before the
		// process exits (Hub.Start).
		controller.ElectLeader(&mgrOpts, members.Namespace)
	}
	mgr, err := mcmanager.New(cfg, provider.ForManager(), mgrOpts)
	if err != nil {
		return err
	}
	hub, err := controller.SetupHub(ctx, mgr, mgr, provider, opts)
	if err != nil {
		return err
	}
	metrics.Registry.MustRegister(controller.NewCollector(mgr, opts.RegistrationNamespace))
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	if !opts.Tenancy {
		ctrl.Log.Info("WARNING: --tenancy=off: any ClusterJob may run any pod template, privileged ones included, on every node of every registered cluster; " +
			"use it only on a hub where everyone who may create a ClusterJob is a fleet admin")
	}
	ctrl.Log.Info("Starting the hub controller", "registrationNamespace", members.Namespace, "hubID", opts.HubID, "tenancy", opts.Tenancy, "sharded", share != nil)
	return hub.Start(ctx)
}

// validateShard refuses --shard where it cannot work: without a leader,
// every replica would decide for the fleet; without a name, the replicas
// could not tell their sessions apart.
func validateShard(serve serving, podName string) error {
	if !serve.shard {
		return nil
	}
	var errs []error
	if !serve.leaderElect {
		errs = append(errs, errors.New("--shard needs --leader-elect: one replica decides for the fleet"))
	}
	if podName == "" {
		errs = append(errs, errors.New("--shard needs POD_NAME, the replica's name (the pod's metadata.name)"))
	} else if bad := validation.IsDNS1123Subdomain(podName); len(bad) > 0 {
		errs = append(errs, fmt.Errorf("POD_NAME %q is not a valid name: %s", podName, strings.Join(bad, "; ")))
	}
	return errors.Join(errs...)
}

// validate refuses flag values the hub cannot run with, naming the flag,
// before anything starts: a zero interval would panic a ticker, a zero
// timeout would fail every member at once.
func validate(members clusters.Options, opts controller.Options) error {
	var errs []error
	positive := func(flag string, d time.Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("--%s must be positive, not %s", flag, d))
		}
	}
	positive("member-request-timeout", members.RequestTimeout)
	positive("member-connect-timeout", members.ConnectTimeout)
	positive("member-health-interval", members.HealthInterval)
	positive("unreachable-timeout", opts.UnreachableTimeout)
	positive("member-timeout", opts.MemberTimeout)
	positive("member-error-timeout", opts.MemberErrorTimeout)
	positive("gc-interval", opts.GCInterval)
	if opts.HubID != "" {
		if bad := validation.IsValidLabelValue(opts.HubID); len(bad) > 0 {
			errs = append(errs, fmt.Errorf("--hub-id %q is not a valid label value: %s", opts.HubID, strings.Join(bad, "; ")))
		}
	}
	if opts.EndedRunTTL < 0 {
		errs = append(errs, fmt.Errorf("--ended-run-ttl must not be negative, not %s", opts.EndedRunTTL))
	}
	if opts.EmptySelectionGrace < 0 {
		errs = append(errs, fmt.Errorf("--empty-selection-grace must not be negative, not %s", opts.EmptySelectionGrace))
	}
	if members.QPS <= 0 {
		errs = append(errs, fmt.Errorf("--member-qps must be positive, not %g", members.QPS))
	}
	if members.Burst < 1 {
		errs = append(errs, fmt.Errorf("--member-burst must be at least 1, not %d", members.Burst))
	}
	if opts.MemberWorkers < 1 {
		errs = append(errs, fmt.Errorf("--member-workers must be at least 1, not %d", opts.MemberWorkers))
	}
	if opts.Parallelism < 1 {
		errs = append(errs, fmt.Errorf("--parallelism must be at least 1, not %d", opts.Parallelism))
	}
	if members.Namespace == "" {
		errs = append(errs, errors.New("--registration-namespace must not be empty"))
	}
	return errors.Join(errs...)
}

// hubID is the UID of the hub's kube-system namespace: it exists on every
// cluster, never changes while the cluster lives, and differs between hubs.
func hubID(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ns, err := cs.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading the hub's identity (the kube-system namespace UID; set --hub-id to choose one): %w", err)
	}
	return string(ns.UID), nil
}
