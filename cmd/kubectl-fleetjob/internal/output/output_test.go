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

package output

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/utils/ptr"

	"github.com/fleetjob/fleetjob/pkg/plan"
)

func results() []NodeResult {
	ok := NewNodeResult("eu-1", "n1")
	ok.Group, ok.Phase = "batch-1", "Succeeded"
	bad := NewNodeResult("eu-1", "n2")
	bad.Group, bad.Phase, bad.Reason, bad.ExitCode = "batch-1", "Failed", "BackoffLimitExceeded", ptr.To[int32](3)
	other := NewNodeResult("us-1", "m1")
	other.Group, other.GroupIndex, other.Phase = "batch-2", 1, "Pending"
	return []NodeResult{ok, bad, other}
}

// TestListPrinters: a List of output-only objects prints with kubectl's
// printers as API objects do.
func TestListPrinters(t *testing.T) {
	list, err := List(results())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		printer printers.ResourcePrinter
		want    string
	}{
		{
			name:    "name",
			printer: &printers.NamePrinter{ShortOutput: true},
			want:    "noderesult.cli.fleetjob.io/eu-1/n1\nnoderesult.cli.fleetjob.io/eu-1/n2\nnoderesult.cli.fleetjob.io/us-1/m1\n",
		},
		{
			name:    "jsonpath over items",
			printer: mustJSONPath(t, `{range .items[?(@.phase=="Failed")]}{.cluster} {.node} {.exitCode}{"\n"}{end}`),
			want:    "eu-1 n2 3\n",
		},
		{
			name:    "custom columns",
			printer: mustColumns(t, "NODE:.metadata.name,PHASE:{.phase},EXIT:exitCode", false),
			want:    "NODE      PHASE       EXIT\neu-1/n1   Succeeded   <none>\neu-1/n2   Failed      3\nus-1/m1   Pending     <none>\n",
		},
		{
			name:    "custom columns without headers",
			printer: mustColumns(t, "GROUP:.groupIndex,KIND:.kind", true),
			want:    "0   NodeResult\n0   NodeResult\n1   NodeResult\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			if err := tc.printer.PrintObj(list, &out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestListYAML: -o yaml is one v1 List whose items carry their kind.
func TestListYAML(t *testing.T) {
	p := NewClusterPlan("eu-1", plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: []string{"n1"}}}})
	list, err := List([]ClusterPlan{p})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := (&printers.YAMLPrinter{}).PrintObj(list, &out); err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: v1
items:
- apiVersion: cli.fleetjob.io/v1alpha1
  cluster: eu-1
  kind: ClusterPlan
  metadata:
    name: eu-1
  plan:
    groups:
    - name: all
      nodes:
      - n1
kind: List
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("-o yaml (-want +got):\n%s", diff)
	}
}

func TestParseCustomColumns(t *testing.T) {
	for _, tc := range []struct {
		spec      string
		wantPaths []string
		wantErr   string
	}{
		{spec: "A:.a,B:{.b.c},C:d[0]", wantPaths: []string{"{.a}", "{.b.c}", "{.d[0]}"}},
		{spec: "", wantErr: "-o custom-columns needs columns"},
		{spec: "A", wantErr: `"A" is not HEADER:JSONPATH`},
		{spec: "A:", wantErr: `"A:" is not HEADER:JSONPATH`},
		{spec: "A:{.a", wantErr: "column A: JSONPath"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			cols, err := ParseCustomColumns(tc.spec)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if tc.wantErr == "" && gotErr != "" || !strings.Contains(gotErr, tc.wantErr) {
				t.Fatalf("error %q, want %q", gotErr, tc.wantErr)
			}
			var paths []string
			for _, c := range cols {
				paths = append(paths, c.Path)
			}
			if diff := cmp.Diff(tc.wantPaths, paths); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadCustomColumns(t *testing.T) {
	cols, err := ReadCustomColumns(strings.NewReader("NAME   PHASE\n.metadata.name   .phase\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"NAME", "PHASE"}, []string{cols[0].Header, cols[1].Header}); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if _, err := ReadCustomColumns(strings.NewReader("NAME PHASE\n.metadata.name\n")); err == nil {
		t.Error("a file with fewer paths than headers was accepted")
	}
}

func mustJSONPath(t *testing.T, tmpl string) printers.ResourcePrinter {
	t.Helper()
	p, err := printers.NewJSONPathPrinter(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustColumns(t *testing.T, spec string, noHeaders bool) printers.ResourcePrinter {
	t.Helper()
	cols, err := ParseCustomColumns(spec)
	if err != nil {
		t.Fatal(err)
	}
	return &CustomColumns{Columns: cols, NoHeaders: noHeaders}
}
