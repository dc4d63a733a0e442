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
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/fleetjob/fleetjob/pkg/plan"
)

// maxDecodedNodes bounds what Plans holds, in planned nodes over all its
// plans: some tens of MiB at most, whatever the fleet.
const maxDecodedNodes = 500_000

// Plans keeps decoded plans, so that a plan is decompressed and decoded
// once, not on every reconcile of its run. A plan ConfigMap is immutable,
// so its UID names its content. The zero value is ready; it is safe for
// concurrent use. The plans it returns are shared: callers only read them.
type Plans struct {
	mu    sync.Mutex
	plans map[types.UID]plan.Plan
	nodes int
}

func (ps *Plans) get(uid types.UID) (plan.Plan, bool) {
	if ps == nil || uid == "" {
		return plan.Plan{}, false
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p, ok := ps.plans[uid]
	return p, ok
}

// put keeps p. Past maxDecodedNodes it starts over: plans of finished and
// deleted runs go with the rest, and live ones are decoded again once.
func (ps *Plans) put(uid types.UID, p plan.Plan) {
	if ps == nil || uid == "" {
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	n := p.NodeCount() + len(p.Skipped)
	if ps.plans == nil || ps.nodes+n > maxDecodedNodes {
		ps.plans, ps.nodes = map[types.UID]plan.Plan{}, 0
	}
	if _, ok := ps.plans[uid]; !ok {
		ps.plans[uid] = p
		ps.nodes += n
	}
}
