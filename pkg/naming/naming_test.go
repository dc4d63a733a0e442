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

package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

const uid = types.UID("0b7a2c4e-5f1d-4b8a-9c3e-7d6f5a4b3c2d")

func TestJobName(t *testing.T) {
	long := strings.Repeat("very-long-node-name.", 12) + "example-long-domain.com"
	testCases := map[string]struct {
		clusterJob, cluster, node string
		wantPrefix                string
	}{
		"short names stay readable":      {"disk-clean", "member-1", "node-1", "disk-clean-node-1-"},
		"dots become dashes":             {"scan", "eu", "ip-10-0-0-1.ec2.internal", "scan-ip-10-0-0-1-ec2-internal-"},
		"long clusterjob name truncated": {strings.Repeat("a", 200), "c", "n", strings.Repeat("a", 20) + "-n-"},
		"253-character node name":        {"x", "c", long[:253], "x-very-long-node-name-very-long-node-name-very-long-"},
		"upper case and odd runes":       {"Rotate_Certs", "c", "Node..1", "rotate-certs-node-1-"},
		"nothing readable":               {"---", "c", "...", "fleetjob-"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got := JobName(tc.clusterJob, uid, tc.cluster, tc.node)
			if errs := validation.IsDNS1123Label(got); len(errs) != 0 {
				t.Fatalf("JobName() = %q is not a DNS-1123 label: %v", got, errs)
			}
			if !strings.HasPrefix(got, tc.wantPrefix) {
				t.Errorf("JobName() = %q, want prefix %q", got, tc.wantPrefix)
			}
			if again := JobName(tc.clusterJob, uid, tc.cluster, tc.node); again != got {
				t.Errorf("JobName() not stable: %q then %q", got, again)
			}
		})
	}
}

func TestMemberRunName(t *testing.T) {
	testCases := map[string]struct {
		clusterJob, cluster string
		wantPrefix          string
	}{
		"short names stay readable": {"disk-clean", "member-1", "disk-clean-member-1-"},
		"dots become dashes":        {"scan", "eu.prod", "scan-eu-prod-"},
		"long names truncated":      {strings.Repeat("a", 253), strings.Repeat("c", 253), strings.Repeat("a", 253-hashLen-1)},
		"nothing readable":          {"---", "...", "fleetjob-"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got := MemberRunName(tc.clusterJob, tc.cluster)
			if errs := validation.IsDNS1123Subdomain(got); len(errs) != 0 {
				t.Fatalf("MemberRunName() = %q is not a DNS-1123 subdomain: %v", got, errs)
			}
			if !strings.HasPrefix(got, tc.wantPrefix) {
				t.Errorf("MemberRunName() = %q, want prefix %q", got, tc.wantPrefix)
			}
		})
	}
	if a, b := MemberRunName("a-b", "c"), MemberRunName("a", "b-c"); a == b {
		t.Errorf("MemberRunName(a-b, c) = MemberRunName(a, b-c) = %q", a)
	}
}

func TestJobNameDistinct(t *testing.T) {
	long := strings.Repeat("n", 240)
	seen := map[string]string{}
	add := func(cluster, node string) {
		name := JobName("job", uid, cluster, node)
		key := cluster + "/" + node
		if prev, ok := seen[name]; ok {
			t.Fatalf("JobName(%s) = JobName(%s) = %q", key, prev, name)
		}
		seen[name] = key
	}
	for i := range 10000 {
		// Nodes that differ only past the truncated part must still differ.
		add("c1", long+"-"+strings.Repeat("x", i%13)+string(rune('a'+i%26))+strings.Repeat("0", i/26%10)+strings.Repeat("9", i/260))
	}
	// The same node in two clusters, and cluster/node splits that join alike.
	add("c2", long+"-a")
	add("a", "b.c")
	add("a.b", "c")
}

func TestLabelValue(t *testing.T) {
	testCases := map[string]struct {
		in       string
		wantSame bool
	}{
		"short value kept":      {"member-1", true},
		"empty kept":            {"", true},
		"63 characters kept":    {strings.Repeat("a", 63), true},
		"64 characters hashed":  {strings.Repeat("a", 64), false},
		"253-character name":    {strings.Repeat("a.", 126) + "a", false},
		"invalid rune hashed":   {"a/b", false},
		"trailing dash hashed":  {"a-", false},
		"upper case value kept": {"Zone-A", true},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got := LabelValue(tc.in)
			if errs := validation.IsValidLabelValue(got); len(errs) != 0 {
				t.Fatalf("LabelValue(%q) = %q is invalid: %v", tc.in, got, errs)
			}
			if (got == tc.in) != tc.wantSame {
				t.Errorf("LabelValue(%q) = %q, want unchanged: %v", tc.in, got, tc.wantSame)
			}
		})
	}
}

func TestPlanName(t *testing.T) {
	got := PlanName(uid)
	if errs := validation.IsDNS1123Subdomain(got); len(errs) != 0 {
		t.Fatalf("PlanName() = %q is invalid: %v", got, errs)
	}
	if got != "fleetjob-plan-"+string(uid) {
		t.Errorf("PlanName() = %q", got)
	}
}

func TestResultsName(t *testing.T) {
	got := ResultsName(uid)
	if errs := validation.IsDNS1123Subdomain(got); len(errs) != 0 {
		t.Fatalf("ResultsName() = %q is invalid: %v", got, errs)
	}
	if got == PlanName(uid) {
		t.Errorf("ResultsName() = PlanName() = %q", got)
	}
}

// FuzzJobName checks, for any inputs, that a Job name is a valid DNS-1123
// label, is stable, and differs between two different nodes.
func FuzzJobName(f *testing.F) {
	f.Add("disk-clean", "member-1", "node-1", "node-2")
	f.Add(strings.Repeat("a", 253), strings.Repeat("c", 253), strings.Repeat("n.", 126)+"x", strings.Repeat("n.", 126)+"y")
	f.Add("", "", "", "-")
	f.Fuzz(func(t *testing.T, clusterJob, cluster, node, other string) {
		got := JobName(clusterJob, uid, cluster, node)
		if errs := validation.IsDNS1123Label(got); len(errs) != 0 {
			t.Fatalf("JobName(%q, %q, %q) = %q: %v", clusterJob, cluster, node, got, errs)
		}
		if JobName(clusterJob, uid, cluster, node) != got {
			t.Fatalf("JobName(%q, %q, %q) not stable", clusterJob, cluster, node)
		}
		if other != node && JobName(clusterJob, uid, cluster, other) == got {
			t.Fatalf("nodes %q and %q share Job name %q", node, other, got)
		}
		if errs := validation.IsValidLabelValue(LabelValue(node)); len(errs) != 0 {
			t.Fatalf("LabelValue(%q) invalid: %v", node, errs)
		}
	})
}

// FuzzMemberRunName checks, for any inputs, that a MemberRun name is a valid
// DNS-1123 subdomain, is stable, and differs between two clusters or two
// ClusterJobs.
func FuzzMemberRunName(f *testing.F) {
	f.Add("disk-clean", "member-1", "member-2")
	f.Add("a-b", "c", "b-c")
	f.Add(strings.Repeat("a", 253), strings.Repeat("c.", 126)+"x", strings.Repeat("c.", 126)+"y")
	f.Add("", "", "-")
	f.Fuzz(func(t *testing.T, clusterJob, cluster, other string) {
		got := MemberRunName(clusterJob, cluster)
		if errs := validation.IsDNS1123Subdomain(got); len(errs) != 0 {
			t.Fatalf("MemberRunName(%q, %q) = %q: %v", clusterJob, cluster, got, errs)
		}
		if MemberRunName(clusterJob, cluster) != got {
			t.Fatalf("MemberRunName(%q, %q) not stable", clusterJob, cluster)
		}
		if other != cluster && MemberRunName(clusterJob, other) == got {
			t.Fatalf("clusters %q and %q share MemberRun name %q", cluster, other, got)
		}
		if other != clusterJob && MemberRunName(other, cluster) == got {
			t.Fatalf("ClusterJobs %q and %q share MemberRun name %q", clusterJob, other, got)
		}
	})
}

func TestResultsPartName(t *testing.T) {
	got := ResultsPartName(uid, "0123456789abcdef", 15)
	if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 || got == ResultsPartName(uid, "0123456789abcdee", 15) {
		t.Errorf("ResultsPartName() = %q: %v, want a valid name that differs per version", got, errs)
	}
}

func TestLeaseNames(t *testing.T) {
	long := strings.Repeat("a", 253)
	for _, name := range []string{"hub-0", "fleetjob-hub-6d9f-x2x", "a.b", "a-b", "A_B", long, ""} {
		for _, got := range []string{PeerLeaseName(name), MemberLeaseName(name)} {
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
				t.Errorf("lease name %q of %q is not a DNS-1123 subdomain: %v", got, name, errs)
			}
		}
	}
	if PeerLeaseName("a.b") == PeerLeaseName("a-b") || MemberLeaseName("a.b") == MemberLeaseName("a-b") {
		t.Errorf("names that sanitize alike share a Lease")
	}
	if PeerLeaseName("x") == MemberLeaseName("x") {
		t.Errorf("a replica's Lease and a member's Lease share a name")
	}
	if got, want := MemberLeaseName("prod-eu-1"), "fleetjob-member-prod-eu-1-"; !strings.HasPrefix(got, want) {
		t.Errorf("MemberLeaseName(prod-eu-1) = %q, want it to start %q", got, want)
	}
}
