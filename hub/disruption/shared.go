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

package disruption

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// Shared is where the replicas of a sharded hub publish what their ledgers
// count, each in a section of one record. A replica's ledger knows only
// the runs of the members it serves; a budget spans members of every
// replica, so a grant reads the others' counts and publishes its own,
// reservation included, on the condition that the record is still the
// version it read: two replicas granting at once cannot both win, and the
// loser decides again on what the winner published.
type Shared interface {
	// Read returns what the other live replicas publish, and the record's
	// version; "" when there is no record yet.
	Read(ctx context.Context) (Usage, string, error)
	// Publish replaces this replica's section if the record is still at
	// version, and fails with a conflict (apierrors.IsConflict) if not.
	Publish(ctx context.Context, u Usage, version string) error
}

// Usage is what one or more ledgers count.
type Usage struct {
	// Nodes are the disrupted nodes of every run observed or granted, 0
	// included: a peer then counts 0 for the run rather than its last
	// written row.
	Nodes map[Key]int
	// Held are the runs a grant held back, and the budget that held each.
	Held map[Key]string
}

// section is one replica's part of the shared record.
type section struct {
	// Session is the replica's session when it wrote: the section counts
	// only while that session lives. A replica gone, or restarted into a
	// new session, leaves a section nobody counts; the members it served
	// are counted at their rows until their new owner observes them.
	Session string `json:"session"`
	Runs    []use  `json:"runs,omitempty"`
}

// use is one run's count in one cluster.
type use struct {
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	ClusterJob string `json:"clusterJob"`
	Cluster    string `json:"cluster"`
	Nodes      int    `json:"nodes"`
	// HeldBy is the budget that held the run back, if one did.
	HeldBy string `json:"heldBy,omitempty"`
}

// EncodeSection is this replica's section of the shared record, in a
// stable order so that an unchanged count writes the same bytes.
func EncodeSection(session string, u Usage) (string, error) {
	keys := slices.Collect(maps.Keys(u.Nodes))
	for k := range u.Held {
		if _, ok := u.Nodes[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Run.Namespace, b.Run.Namespace), cmp.Compare(a.Run.Name, b.Run.Name), cmp.Compare(a.Cluster, b.Cluster))
	})
	s := section{Session: session, Runs: make([]use, 0, len(keys))}
	for _, k := range keys {
		s.Runs = append(s.Runs, use{Namespace: k.Run.Namespace, Name: k.Run.Name, ClusterJob: k.ClusterJob, Cluster: k.Cluster, Nodes: u.Nodes[k], HeldBy: u.Held[k]})
	}
	b, err := json.Marshal(s)
	return string(b), err
}

// Sections merges the sections of the record (by replica identity) whose
// sessions live, but self's: a run two replicas publish (one handing its
// member over) counts at the higher count. It also returns the replicas
// whose sections no longer count, for the next writer to drop. A section
// that cannot be decoded is an error: counting it as nothing could pass a
// budget.
func Sections(data map[string]string, self string, live func(session string) bool) (Usage, []string, error) {
	u := Usage{Nodes: map[Key]int{}, Held: map[Key]string{}}
	var dead []string
	for _, replica := range slices.Sorted(maps.Keys(data)) {
		if replica == self {
			continue
		}
		var s section
		if err := json.Unmarshal([]byte(data[replica]), &s); err != nil {
			return Usage{}, nil, fmt.Errorf("the disruption counts of hub replica %s cannot be read (delete that key to drop them): %w", replica, err)
		}
		if !live(s.Session) {
			dead = append(dead, replica)
			continue
		}
		for _, r := range s.Runs {
			k := Key{Run: types.NamespacedName{Namespace: r.Namespace, Name: r.Name}, ClusterJob: r.ClusterJob, Cluster: r.Cluster}
			if n, ok := u.Nodes[k]; !ok || r.Nodes > n {
				u.Nodes[k] = r.Nodes
			}
			if r.HeldBy != "" {
				u.Held[k] = r.HeldBy
			}
		}
	}
	return u, dead, nil
}
