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
	"fmt"
	"maps"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// How the hub connects to members: what it refuses to connect with, and
// what a connection costs a member once it is up.
var _ = Describe("Member connections", func() {
	var stopHub func()

	AfterEach(func() { cleanUp(stopHub) })

	It("refuses kubeconfigs it must never act on, on the cluster's row and in a Warning event on the Secret, and serves the others", func() {
		a := members["member-a"]
		register(a, admin, map[string]string{"refusal": "case"})
		u, err := a.env.AddUser(admin, nil)
		Expect(err).NotTo(HaveOccurred())
		data, err := u.KubeConfig()
		Expect(err).NotTo(HaveOccurred())
		marker := filepath.Join(GinkgoT().TempDir(), "plugin-ran")
		// Each case breaks member-a's working admin kubeconfig one way; the
		// message must name the field at fault.
		type refusal struct {
			mutate    func(*clientcmdapi.Config)
			wantField string
		}
		cases := map[string]refusal{
			"refused-exec": {
				mutate: func(c *clientcmdapi.Config) {
					for _, au := range c.AuthInfos {
						au.Exec = &clientcmdapi.ExecConfig{Command: "sh", Args: []string{"-c", "touch " + marker},
							APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
					}
				},
				wantField: "].exec is not allowed",
			},
			"refused-insecure": {
				mutate: func(c *clientcmdapi.Config) {
					for _, cl := range c.Clusters {
						cl.CertificateAuthorityData, cl.InsecureSkipTLSVerify = nil, true
					}
				},
				wantField: "].insecure-skip-tls-verify is not allowed",
			},
			"refused-http": {
				mutate: func(c *clientcmdapi.Config) {
					for _, cl := range c.Clusters {
						cl.Server = "http" + cl.Server[len("https"):]
					}
				},
				wantField: "].server must be an https:// URL",
			},
			"refused-token-file": {
				mutate: func(c *clientcmdapi.Config) {
					for _, au := range c.AuthInfos {
						au.Token, au.TokenFile = "", "/var/run/secrets/token"
					}
				},
				wantField: "].tokenFile is not allowed",
			},
		}
		for name, tc := range cases {
			cfg, err := clientcmd.Load(data)
			Expect(err).NotTo(HaveOccurred())
			tc.mutate(cfg)
			bad, err := clientcmd.Write(*cfg)
			Expect(err).NotTo(HaveOccurred())
			registerKubeconfig(name, bad, map[string]string{"refusal": "case"})
			DeferCleanup(unregister, name)
		}
		registerKubeconfig("refused-not-yaml", []byte("{not yaml"), map[string]string{"refusal": "case"})
		DeferCleanup(unregister, "refused-not-yaml")
		cases["refused-not-yaml"] = refusal{wantField: "data.kubeconfig: kubeconfig: not a valid kubeconfig"}

		// The refused clusters time out as unreachable: the run still ends.
		stopHub = startHub(hubOptions{unreachableTimeout: 8 * time.Second})
		cj := makeClusterJob("refusals").Clusters(map[string]string{"refusal": "case"}).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			rows := rowsByName(g, cj)
			for name, tc := range cases {
				g.Expect(rows).To(HaveKey(name))
				g.Expect(rows[name].Reason).To(Equal(fleetv1.ClusterReasonInvalidRegistration), name)
				g.Expect(rows[name].Message).To(ContainSubstring(tc.wantField), name)
			}
		}).Should(Succeed())
		for name, tc := range cases {
			Eventually(func(g Gomega) {
				g.Expect(eventNotes(g, workNamespace, name, fleetv1.ClusterReasonInvalidRegistration)).
					To(ContainElement(And(ContainSubstring("cluster "+name), ContainSubstring(tc.wantField))))
			}).Should(Succeed(), "Warning event on Secret %s", name)
		}
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		rows := rowsByName(Default, cj)
		Expect(rows["member-a"].Phase).To(Equal(fleetv1.ClusterCompleted), "refused registrations hold up no other")
		for name, tc := range cases {
			Expect(rows[name].Reason).To(Equal(fleetv1.ReasonUnreachableTimeout), name)
			Expect(rows[name].Message).To(ContainSubstring(tc.wantField), name)
		}
		Expect(jobNodes(a, cj)).To(Equal(nodeNames("a", 4)))
		Expect(marker).NotTo(BeAnExistingFile(), "the registration's exec plugin ran")
	})

	It("keeps every member watch open while idle: none restarts within 5 minutes of the last", func() {
		register(members["member-a"], admin, nil)
		register(members["member-b"], admin, nil)
		stopHub = startHub(hubOptions{})
		// The watches the hub keeps in each member; each is opened once the
		// member connects.
		var watches []map[string]string
		for _, m := range []string{"member-a", "member-b"} {
			for _, resource := range []string{"jobs", "configmaps", "nodes"} {
				watches = append(watches, map[string]string{"member_cluster": m, "resource": resource})
			}
		}
		opened := func(g Gomega) map[string]float64 {
			out := map[string]float64{}
			for _, w := range watches {
				n := counterValue("fleetjob_member_watch_requests_total", w)
				g.Expect(n).To(BeNumerically(">", 0), "no watch of %v yet", w)
				out[fmt.Sprint(w)] = n
			}
			return out
		}
		// Opening may take two requests (a streaming watch-list refused,
		// then LIST and WATCH; seen for the metadata-only Node informer):
		// the window starts once every count held still between two polls.
		var before map[string]float64
		Eventually(func(g Gomega) bool {
			now := opened(g)
			settled := maps.Equal(now, before)
			before = now
			return settled
		}).WithPolling(2 * time.Second).Should(BeTrue())
		// A watch ends only when the API server times it out, 5 to 10
		// minutes after client-go opened it, or on a fault; none of those
		// falls within this window, which ends well within 5 minutes of the
		// first watches. A watch cut by a client timeout (the hub's request
		// timeout is 5 s here) restarts several times in it.
		const maxRestartsPer5Minutes = 1
		window := 20 * time.Second
		allowed := float64(maxRestartsPer5Minutes * int(window/(5*time.Minute)))
		Consistently(func(g Gomega) {
			now := opened(g)
			for w, n := range now {
				g.Expect(n-before[w]).To(BeNumerically("<=", allowed), "restarts of the watch %s", w)
			}
		}).WithTimeout(window).WithPolling(time.Second).Should(Succeed())
	})
})

// rowsByName are cj's cluster rows by cluster name.
func rowsByName(g Gomega, cj *fleetv1.ClusterJob) map[string]fleetv1.ClusterStatus {
	out := map[string]fleetv1.ClusterStatus{}
	for _, row := range get(cj)(g).Status.Clusters {
		out[row.Name] = row
	}
	return out
}
