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

package hub

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/spoke"
)

var _ = Describe("The results record written ahead", func() {
	var stopHub func()
	AfterEach(func() {
		members["member-a"].runner.hold(false)
		cleanUp(stopHub)
	})

	It("never runs a node twice when the hub stops between recording a group and creating its Jobs", func() {
		a := members["member-a"]
		register(a, admin, nil)
		a.runner.hold(true)
		// The hub's creates of the second group's Jobs never reach the
		// member: they wait until the hub stops.
		stopHub = startHub(hubOptions{wrapMember: holdJobCreates("a-node-3", "a-node-4")})
		cj := makeClusterJob("stopped-before-create").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(a, cj) }).Should(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1}))
		a.runner.hold(false)
		Eventually(func(g Gomega) {
			res := recorded(g, a, cj)
			g.Expect(res.Nodes.Get("a-node-3").Phase).To(Equal(spoke.NodeStarting))
			g.Expect(res.Nodes.Get("a-node-4").Phase).To(Equal(spoke.NodeStarting))
		}).Should(Succeed())
		stopHub()
		// Whatever became of the Jobs, the hub that starts again must not
		// create them: it cannot tell a create that never happened from a
		// Job run and deleted (a TTL) while no hub looked.
		stopHub = startHub(hubOptions{})
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Nodes).To(Equal(fleetv1.NodeCounts{Total: 4, Succeeded: 2, Failed: 2}))
		for _, n := range row.FailedNodes {
			Expect(n.Reason).To(Equal(fleetv1.NodeReasonJobDeleted), n.Node)
		}
		Consistently(func() map[string]int { return jobNodes(a, cj) }).WithTimeout(2*time.Second).
			Should(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1}), "the nodes recorded as starting are not created")
	})
})

// refuseRecordUpdates wraps a member so that the hub's updates of its runs'
// results records fail while refusing is set, as a member API server that
// times out or a hub stopped between two writes would leave them; refused
// counts them.
func refuseRecordUpdates(refusing *atomic.Bool, refused *atomic.Int32) func(cluster.Cluster) cluster.Cluster {
	return func(cl cluster.Cluster) cluster.Cluster {
		return &recordRefusingCluster{Cluster: cl, refusing: refusing, refused: refused}
	}
}

type recordRefusingCluster struct {
	cluster.Cluster
	refusing *atomic.Bool
	refused  *atomic.Int32
}

func (c *recordRefusingCluster) GetClient() client.Client {
	return &recordRefusingClient{Client: c.Cluster.GetClient(), refusing: c.refusing, refused: c.refused}
}

type recordRefusingClient struct {
	client.Client
	refusing *atomic.Bool
	refused  *atomic.Int32
}

func (c *recordRefusingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if _, ok := obj.(*corev1.ConfigMap); ok && c.refusing.Load() && obj.GetLabels()[fleetv1.ComponentLabel] == "results" {
		c.refused.Add(1)
		return apierrors.NewInternalError(errors.New("results record update refused by the test"))
	}
	return c.Client.Update(ctx, obj, opts...)
}

// holdJobCreates wraps a member so that the hub's creates of the Jobs of
// nodes wait until the hub stops, and never reach the member.
func holdJobCreates(nodes ...string) func(cluster.Cluster) cluster.Cluster {
	held := map[string]bool{}
	for _, n := range nodes {
		held[n] = true
	}
	return func(cl cluster.Cluster) cluster.Cluster {
		return &holdingCluster{Cluster: cl, held: held}
	}
}

type holdingCluster struct {
	cluster.Cluster
	held map[string]bool
}

func (c *holdingCluster) GetClient() client.Client {
	return &holdingClient{Client: c.Cluster.GetClient(), held: c.held}
}

type holdingClient struct {
	client.Client
	held map[string]bool
}

func (c *holdingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if _, ok := obj.(*batchv1.Job); ok && c.held[obj.GetAnnotations()[fleetv1.NodeAnnotation]] {
		<-ctx.Done()
		return ctx.Err()
	}
	return c.Client.Create(ctx, obj, opts...)
}

// wrappingManager hands the reconcilers members wrapped by wrap.
type wrappingManager struct {
	mcmanager.Manager
	wrap func(cluster.Cluster) cluster.Cluster
}

func (m *wrappingManager) GetCluster(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	cl, err := m.Manager.GetCluster(ctx, name)
	if err != nil || name == "" {
		return cl, err
	}
	return m.wrap(cl), nil
}
