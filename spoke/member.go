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

package spoke

import (
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Member is one run's work in one member cluster: the run, the clients it
// reads and writes the member through, and what the caller keeps between
// reconciles. Its methods are what a reconcile does in the member
// (observe, start a group, record results, delete, drain, release). A
// Member is a small value: the hub makes one per reconcile of a cluster.
type Member struct {
	// Client reads the member and writes to it. It may be a member cache's
	// client: its lists are not paged then, as a cache does not support
	// continue tokens, and nodes are read metadata-only, so that a cache
	// holds only their metadata.
	Client client.Client
	// Live reads from the member's API server, where a cache may be behind
	// a write of the moment (a record, a Job just created) or hold no
	// such objects at all (pods, events). Methods that say so need it.
	Live client.Reader
	// Run is the run in the member.
	Run Run
	// Caches hold what was decoded and derived in earlier reconciles,
	// shared by every member of the caller, so that a reconcile costs what
	// changed since the last. Each one left nil is not kept.
	Caches Caches
	// Informers, when set, are the informers of Client's cache: the run's
	// Jobs and the nodes are read from their stores, without a List.
	Informers *Informers
	// Indexed tells that Client is a member cache with RunIndex on Jobs:
	// the run's Jobs are found by the index, and Jobs and nodes are read
	// without copying the cache's objects, as they are only read.
	Indexed bool
}

// Caches are what a caller keeps of its runs between reconciles, across
// members. Correctness never depends on them: every entry is checked
// against the stored object's UID and resourceVersion, and what a restart
// loses is read again.
type Caches struct {
	// Plans are decoded plans by their ConfigMap's UID: a frozen plan never
	// changes.
	Plans *Plans
	// Records are the results records last written or read, by version.
	Records *Records
	// Derivations are each run's derived state, and the Jobs and nodes
	// that changed since it was derived: Observe derives those again only.
	Derivations *Derivations
}

// Forget drops what c holds of the run of ClusterJob clusterJob in member
// cluster: call it once the run finished there, so that its decoded plan
// and record, its derived state and the Jobs that state points at are not
// kept (up to maxDecodedNodes of finished runs would be).
func (c Caches) Forget(clusterJob types.UID, cluster string) {
	key := derivationKey(clusterJob, cluster)
	c.Plans.forget(key)
	c.Records.forget(key)
	c.Derivations.Forget(clusterJob, cluster)
}

// options are m's caches with opts applied.
func (m Member) options(opts []ObserveOption) observeOptions {
	o := observeOptions{indexed: m.Indexed, informers: m.Informers,
		plans: m.Caches.Plans, records: m.Caches.Records, derivations: m.Caches.Derivations}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}
