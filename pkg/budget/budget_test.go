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

package budget

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestResolve(t *testing.T) {
	num := func(n int) *intstr.IntOrString { v := intstr.FromInt32(int32(n)); return &v }
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	testCases := map[string]struct {
		value         *intstr.IntOrString
		total, failed int
		wantOK        bool
		wantAllowed   int
		wantExceeded  bool
		wantErr       bool
	}{
		"not set: no budget":                     {value: nil, total: 10, failed: 10},
		"0: the first failure exceeds":           {value: num(0), total: 10, failed: 1, wantOK: true, wantAllowed: 0, wantExceeded: true},
		"0 with no failure: not exceeded":        {value: num(0), total: 10, failed: 0, wantOK: true, wantAllowed: 0},
		"a number: exceeded past it, not at it":  {value: num(2), total: 10, failed: 2, wantOK: true, wantAllowed: 2},
		"a number past it":                       {value: num(2), total: 10, failed: 3, wantOK: true, wantAllowed: 2, wantExceeded: true},
		"a number larger than the scope":         {value: num(50), total: 3, failed: 3, wantOK: true, wantAllowed: 50},
		"5% of a tiny group rounds down to 0":    {value: pct("5%"), total: 10, failed: 1, wantOK: true, wantAllowed: 0, wantExceeded: true},
		"5% of 19 rounds down to 0":              {value: pct("5%"), total: 19, failed: 0, wantOK: true, wantAllowed: 0},
		"5% of 20 is 1":                          {value: pct("5%"), total: 20, failed: 1, wantOK: true, wantAllowed: 1},
		"5% of a huge cluster":                   {value: pct("5%"), total: 100000, failed: 5000, wantOK: true, wantAllowed: 5000},
		"5% of a huge cluster, one more":         {value: pct("5%"), total: 100000, failed: 5001, wantOK: true, wantAllowed: 5000, wantExceeded: true},
		"100% never exceeds":                     {value: pct("100%"), total: 7, failed: 7, wantOK: true, wantAllowed: 7},
		"0% is 0":                                {value: pct("0%"), total: 1000, failed: 1, wantOK: true, wantAllowed: 0, wantExceeded: true},
		"a percentage of an empty scope":         {value: pct("50%"), total: 0, failed: 0, wantOK: true, wantAllowed: 0},
		"not a percentage: an error, 0 allowed":  {value: pct("five"), total: 10, failed: 1, wantOK: true, wantExceeded: true, wantErr: true},
		"a bad percentage: an error, 0 allowed":  {value: pct("x%"), total: 10, failed: 0, wantOK: true, wantErr: true},
		"over 100%: an error, 0 allowed":         {value: pct("150%"), total: 10, failed: 1, wantOK: true, wantExceeded: true, wantErr: true},
		"a negative number: an error, 0 allowed": {value: num(-1), total: 10, failed: 0, wantOK: true, wantErr: true},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			b, ok, err := Resolve(PerGroup, tc.value, tc.total, tc.failed)
			if ok != tc.wantOK || (err != nil) != tc.wantErr {
				t.Fatalf("Resolve() ok = %v, err = %v; want ok %v, an error %v", ok, err, tc.wantOK, tc.wantErr)
			}
			if !ok {
				return
			}
			if b.Allowed != tc.wantAllowed || b.Exceeded() != tc.wantExceeded {
				t.Errorf("Resolve() allows %d, exceeded %v; want %d, %v", b.Allowed, b.Exceeded(), tc.wantAllowed, tc.wantExceeded)
			}
		})
	}
}

func TestResolveErrorNamesTheField(t *testing.T) {
	v := intstr.FromString("ten")
	_, _, err := Resolve(Clusters, &v, 10, 0)
	if err == nil {
		t.Fatal("Resolve() of \"ten\" gave no error")
	}
	if want := `spec.failurePolicy.maxFailedClusters: "ten" is neither a number nor a percentage`; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestDescribe(t *testing.T) {
	v := intstr.FromString("10%")
	b, _, _ := Resolve(PerCluster, &v, 20, 3)
	want := "maxFailedNodesPerCluster 10% allows 2 of 20 nodes to fail; 3 failed"
	if diff := cmp.Diff(want, b.Describe("nodes")); diff != "" {
		t.Errorf("Describe() mismatch (-want +got):\n%s", diff)
	}
}
