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
	"fmt"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/shard"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// killedReplicaBound is how long the members of a sharded replica killed
// with SIGKILL may take to move: its session's lifetime (15 s, renewed
// every 2 s), the next renewal of the survivor, and a connect of each
// member, with room for a loaded 2-core machine.
const killedReplicaBound = 45 * time.Second

var _ = Describe("Hub replicas sharing the members", kwokOnly, func() {
	It("two sharded hub processes run each member from its owner; one killed with -9 mid-run: its members move within the bound, the run completes, one Job per node", func() {
		only(providerKwok, "two hub processes on the host; on kind the hub is the Deployment")
		// The suite's hub makes way; AfterEach starts it again, once the
		// replicas are gone (deferred: they must go even if the spec
		// fails, or the suite's hub would run beside them).
		hub.kill()
		f.kubectlOK("hub", "apply", "--server-side", "-n", workNamespace,
			"-f", filepath.Join(f.root, "config", "sharded", "shard_role.yaml"),
			"-f", filepath.Join(f.root, "config", "sharded", "shard_role_binding.yaml"))
		ids := []string{"fleetjob-hub-0", "fleetjob-hub-1"}
		replicas := map[string]*processHub{}
		for _, id := range ids {
			base := hub.(*processHub)
			replicas[id] = &processHub{f: f, bin: base.bin, kubeconfig: base.kubeconfig,
				logPath: filepath.Join(f.dir, "e2e-"+id+".log"), pidPath: filepath.Join(f.dir, "e2e-"+id+".pid"),
				args: []string{"--leader-elect", "--shard"}, env: []string{"POD_NAME=" + id}}
		}
		defer func() {
			for _, r := range replicas {
				r.kill()
			}
			deleteShardLeases()
		}()
		for _, id := range ids {
			replicas[id].launch()
		}
		owner := map[string]string{}
		for _, m := range f.members {
			owner[m.name] = shard.OwnerOf(m.name, ids)
		}
		By(fmt.Sprintf("each member claimed and engaged by its owner: %v", owner))
		Eventually(func(g Gomega) {
			for _, m := range f.members {
				g.Expect(claimedBy(g, m.name)).To(Equal(owner[m.name]), "the claim of %s", m.name)
				g.Expect(strings.Split(replicas[owner[m.name]].logSinceStart(), "\n")).To(ContainElement(And(ContainSubstring("Engaged member cluster"), ContainSubstring(fmt.Sprintf("%q", m.name)))),
					"%s engaged by its owner", m.name)
			}
		}).WithTimeout(engageTimeout).Should(Succeed())

		cj := makeClusterJob("sharded").Batch(1).RunFor(2 * time.Second).Obj()
		create(cj)
		victim := f.members[0]
		dead, survivor := owner[victim.name], ids[0]
		if survivor == dead {
			survivor = ids[1]
		}
		Eventually(func() int { return len(recorders[victim.name].jobsPerNode(cj.UID)) }).Should(BeNumerically(">=", 2), "the second group started in %s", victim.name)
		killed := time.Now()
		replicas[dead].kill()
		Eventually(func(g Gomega) string { return claimedBy(g, victim.name) }).WithTimeout(killedReplicaBound).Should(Equal(survivor),
			"%s moves to the surviving replica", victim.name)
		AddReportEntry("members of a replica killed with -9 moved after", time.Since(killed).String())

		waitPhase(cj, fleetv1.PhaseCompleted)
		for _, m := range f.members {
			expectRun(m, recorders[m.name], cj, batches(names(eligibleNodes(m)), 1))
		}
	})
})

// claimedBy is the replica whose claim Lease of member names it, "" for
// none.
func claimedBy(g Gomega, member string) string {
	l := &coordinationv1.Lease{}
	err := f.hub.Get(ctx, client.ObjectKey{Namespace: workNamespace, Name: naming.MemberLeaseName(member)}, l)
	if client.IgnoreNotFound(err) != nil {
		g.Expect(err).NotTo(HaveOccurred())
	}
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return ""
	}
	return l.Annotations[shard.ReplicaAnnotation]
}

// deleteShardLeases deletes the sessions and claims of sharded replicas, so
// that the suite's hub and later specs start from none.
func deleteShardLeases() {
	GinkgoHelper()
	leases := &coordinationv1.LeaseList{}
	Expect(f.hub.List(ctx, leases, client.InNamespace(workNamespace))).To(Succeed())
	for i := range leases.Items {
		if l := &leases.Items[i]; l.Labels[shard.PeerLabel] == "true" || l.Labels[shard.ClaimLabel] == "true" || strings.HasPrefix(l.Name, "fleetjob-hub.") {
			Expect(client.IgnoreNotFound(f.hub.Delete(ctx, l))).To(Succeed())
		}
	}
}
