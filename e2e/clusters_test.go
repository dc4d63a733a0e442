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
	"encoding/json"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("kubectl fleetjob clusters", func() {
	It("reaches every member from this machine at the address the hub uses, and counts its nodes", func() {
		var infos []clusterInfo
		Expect(json.Unmarshal([]byte(f.fleetjob("clusters", "-o", "json")), &infos)).To(Succeed())
		for _, m := range f.members {
			i := slices.IndexFunc(infos, func(c clusterInfo) bool { return c.Name == m.name })
			Expect(i).NotTo(Equal(-1), "%s is listed", m.name)
			Expect(infos[i].Reachable).To(BeTrue(), "%s is reachable from here: %s", m.name, infos[i].Message)
			Expect(infos[i].Nodes).To(HaveValue(Equal(nodeCount(m))), "%s's nodes", m.name)
		}
	})
})

// clusterInfo is one cluster of kubectl fleetjob clusters -o json.
type clusterInfo struct {
	Name      string `json:"name"`
	Reachable bool   `json:"reachable"`
	Nodes     *int   `json:"nodes"`
	Message   string `json:"message"`
}
