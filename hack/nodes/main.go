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

// Command nodes creates the fake (kwok) nodes of one member of the local
// fleet, in parallel, and waits until kwok reports them all Ready.
// hack/fleet.sh runs it for every kwok member:
//
//	go run ./hack/nodes --kubeconfig .fleet/member-1.kubeconfig --member 1 --count 6
//
// It replaces a `kubectl apply` of generated YAML that took 11 minutes for
// 5 members of 1,000 nodes; 32 parallel creates take seconds. It is
// idempotent: nodes that exist already are left as they are.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

type options struct {
	kubeconfig   string
	member       int
	count        int
	zones, pools []string
	workers      int
	qps          float64
	burst        int
	timeout      time.Duration
}

func main() {
	var o options
	var zones, pools string
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "Kubeconfig of the member cluster (required).")
	flag.IntVar(&o.member, "member", 0, "Index of the member (1 for member-1): node names are m<member>-node-NN (required).")
	flag.IntVar(&o.count, "count", 0, "Number of nodes.")
	flag.StringVar(&zones, "zones", "zone-a zone-b zone-c", "Values of topology.kubernetes.io/zone, space separated, assigned round robin.")
	flag.StringVar(&pools, "pools", "pool-1 pool-2", "Values of fleetjob.io/pool, space separated, assigned round robin.")
	flag.IntVar(&o.workers, "workers", 32, "Parallel creates.")
	// A kwok member runs with --disable-qps-limits: the client is the limit.
	flag.Float64Var(&o.qps, "qps", 500, "Client requests per second.")
	flag.IntVar(&o.burst, "burst", 1000, "Client request burst.")
	flag.DurationVar(&o.timeout, "timeout", 3*time.Minute, "Time allowed to create the nodes and see them Ready.")
	flag.Parse()
	o.zones, o.pools = strings.Fields(zones), strings.Fields(pools)
	if err := o.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "nodes: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "nodes: member-%d: %v\n", o.member, err)
		os.Exit(1)
	}
}

func (o options) validate() error {
	var errs []error
	if o.kubeconfig == "" {
		errs = append(errs, errors.New("--kubeconfig is required"))
	}
	if o.member < 1 {
		errs = append(errs, errors.New("--member must be at least 1"))
	}
	if o.count < 0 || o.workers < 1 || o.qps <= 0 || o.burst < 1 || o.timeout <= 0 {
		errs = append(errs, errors.New("--count must not be negative; --workers, --qps, --burst and --timeout must be positive"))
	}
	if len(o.zones) == 0 || len(o.pools) == 0 {
		errs = append(errs, errors.New("--zones and --pools need at least one value each"))
	}
	return errors.Join(errs...)
}

func run(ctx context.Context, o options) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := create(ctx, cs, o); err != nil {
		return err
	}
	created := time.Since(start)
	if err := waitReady(ctx, cs, o); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "nodes: member-%d: %d nodes created in %s, all Ready after %s\n",
		o.member, o.count, created.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	return nil
}

// create creates the member's nodes with o.workers parallel requests; a
// node that exists counts as created (fleet.sh up may run twice).
func create(ctx context.Context, cs kubernetes.Interface, o options) error {
	var firstErr atomic.Pointer[error]
	workqueue.ParallelizeUntil(ctx, o.workers, o.count, func(i int) {
		node := fakeNode(o.member, i+1, o.zones, o.pools)
		_, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			err = fmt.Errorf("creating node %s: %w", node.Name, err)
			firstErr.CompareAndSwap(nil, &err)
		}
	})
	if err := firstErr.Load(); err != nil {
		return *err
	}
	return ctx.Err()
}

// waitReady lists the member's nodes once a second until every node of
// ours is Ready: one list a second is cheap next to a watch's setup, and a
// list is all kubectl wait would do.
func waitReady(ctx context.Context, cs kubernetes.Interface, o options) error {
	want := make(map[string]bool, o.count)
	for i := 1; i <= o.count; i++ {
		want[nodeName(o.member, i)] = true
	}
	selector := fmt.Sprintf("fleetjob.io/member=member-%d", o.member)
	for {
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: "0"})
		readyCount := 0
		if err == nil {
			for i := range list.Items {
				if want[list.Items[i].Name] && ready(&list.Items[i]) {
					readyCount++
				}
			}
			if readyCount == o.count {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d nodes Ready when the time was up (last list error: %v): %w", readyCount, o.count, err, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}
