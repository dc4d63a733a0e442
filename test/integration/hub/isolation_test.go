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
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("A run's members", func() {
	var stopHub func()

	AfterEach(func() {
		members["member-a"].runner.hold(false)
		members["member-b"].runner.hold(false)
		cleanUp(stopHub)
	})

	It("are reconciled apart: while member-a's run moves, the hub reads and writes nothing of member-b", func() {
		a, b := members["member-a"], members["member-b"]
		register(a, admin, nil)
		register(b, admin, nil)
		a.runner.hold(true)
		b.runner.hold(true)
		calls := &callCounter{}
		stopHub = startHub(hubOptions{calls: calls})
		cj := makeClusterJob("apart").Batch(1).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())

		// Each member's first Job runs and is held there; once the hub has
		// shown them, nothing changes in either.
		Eventually(func(g Gomega) {
			g.Expect(rowOf(g, cj, 0).Nodes.Running).To(BeEquivalentTo(1))
			g.Expect(rowOf(g, cj, 1).Nodes.Running).To(BeEquivalentTo(1))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		settled := -1
		Eventually(func() bool {
			n := calls.of("member-b")
			still := n == settled
			settled = n
			return still
		}).WithTimeout(10*time.Second).WithPolling(500*time.Millisecond).Should(BeTrue(), "the hub settles on member-b")
		aBefore := calls.of("member-a")

		// member-a runs its 4 groups one after the other: each of its Jobs
		// starts and finishes, and each event there is reconciled.
		a.runner.hold(false)
		Eventually(func(g Gomega) {
			g.Expect(rowOf(g, cj, 0).Phase).To(Equal(fleetv1.ClusterCompleted))
		}).WithTimeout(60 * time.Second).Should(Succeed())
		// At least a Job list and the 3 next groups' creates.
		Expect(calls.of("member-a")-aBefore).To(BeNumerically(">=", 4), "calls to member-a while its run moved")
		Expect(calls.of("member-b")).To(Equal(settled), "calls to member-b while only member-a changed")

		b.runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(a, cj)).To(Equal(nodeNames("a", 4)))
		Expect(jobNodes(b, cj)).To(Equal(nodeNames("b", 7)))
	})
})

// callCounter counts calls through each member's clients, by cluster, and
// keeps when each was made.
type callCounter struct {
	mu    sync.Mutex
	calls map[string]int
	at    map[string][]time.Time
}

func (c *callCounter) add(cluster string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls, c.at = map[string]int{}, map[string][]time.Time{}
	}
	c.calls[cluster]++
	c.at[cluster] = append(c.at[cluster], time.Now())
}

func (c *callCounter) of(cluster string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[cluster]
}

// last is when the last call to cluster was made (zero: none was).
func (c *callCounter) last(cluster string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at := c.at[cluster]; len(at) > 0 {
		return at[len(at)-1]
	}
	return time.Time{}
}

// firstSince is when the first call to cluster at or after t was made
// (zero: none was).
func (c *callCounter) firstSince(cluster string, t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, at := range c.at[cluster] {
		if !at.Before(t) {
			return at
		}
	}
	return time.Time{}
}

// countingManager gives the reconcilers member clusters whose clients, cache
// and API reader alike, count every call.
type countingManager struct {
	mcmanager.Manager
	calls *callCounter
}

func (m *countingManager) GetCluster(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	cl, err := m.Manager.GetCluster(ctx, name)
	if err != nil || name == "" {
		return cl, err
	}
	return &countingCluster{Cluster: cl, name: string(name), calls: m.calls}, nil
}

type countingCluster struct {
	cluster.Cluster
	name  string
	calls *callCounter
}

func (c *countingCluster) GetClient() client.Client {
	return &countingClient{Client: c.Cluster.GetClient(), count: func() { c.calls.add(c.name) }}
}

func (c *countingCluster) GetAPIReader() client.Reader {
	return &countingClient{Reader: c.Cluster.GetAPIReader(), count: func() { c.calls.add(c.name) }}
}

// countingClient counts reads and writes; it embeds a Client (for
// GetClient) or only a Reader (for GetAPIReader).
type countingClient struct {
	client.Client
	client.Reader
	count func()
}

func (c *countingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.count()
	if c.Reader != nil {
		return c.Reader.Get(ctx, key, obj, opts...)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *countingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.count()
	if c.Reader != nil {
		return c.Reader.List(ctx, list, opts...)
	}
	return c.Client.List(ctx, list, opts...)
}

func (c *countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.count()
	return c.Client.Create(ctx, obj, opts...)
}

func (c *countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.count()
	return c.Client.Update(ctx, obj, opts...)
}

func (c *countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.count()
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *countingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.count()
	return c.Client.Delete(ctx, obj, opts...)
}

func (c *countingClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	c.count()
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}
