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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("Cluster selection", hubLogic, func() {
	It("runs only in the member clusterSelector matches; the other gets no Job", func() {
		picked, other := f.member("member-2"), f.member("member-1")
		cj := makeClusterJob("member-2-only").Batch(3).OnlyMember(picked.name).Obj()
		create(cj)
		got := waitPhase(cj, fleetv1.PhaseCompleted)
		Expect(got.Status.Clusters).To(HaveLen(1))
		Expect(got.Status.Clusters[0].Name).To(Equal(picked.name))
		expectRun(picked, recorders[picked.name], cj, batches(names(eligibleNodes(picked)), 3))
		expectNoRun(other, recorders[other.name], cj)
	})
})
