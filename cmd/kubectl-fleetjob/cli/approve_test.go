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

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

// awaiting is a running ClusterJob of namespace ops that waits for a
// decision after its canary cluster; decision, when set, is already there.
func awaiting(name string, phase fleetv1.Phase, decision *fleetv1.ApprovalDecision) *fleetv1.ClusterJob {
	cj := wrappers.MakeClusterJob(name, "ops").Status(fleetv1.ClusterJobStatus{Phase: phase}).Obj()
	cj.Spec.Approval = &fleetv1.Approval{CanaryClusters: ptr.To[int32](1), Decision: decision}
	return cj
}

// decisionHub records what approve and reject send to a hub.
type decisionHub struct {
	c       client.WithWatch
	patches []string
	reviews int
	dryRuns [][]string
}

// newDecisionHub is a hub holding objs that authenticates the plugin as
// user through SelfSubjectReview; beforePatch, when set, runs on the
// stored objects before each patch reaches them.
func newDecisionHub(t *testing.T, user string, beforePatch func(ctx context.Context, c client.WithWatch, call int) error, objs ...client.Object) *decisionHub {
	t.Helper()
	h := &decisionHub{}
	c, err := fakeHub(t, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			review, ok := obj.(*authenticationv1.SelfSubjectReview)
			if !ok {
				return c.Create(ctx, obj, opts...)
			}
			h.reviews++
			if user == "" {
				return errors.New("the server could not find the requested resource")
			}
			review.Status.UserInfo = authenticationv1.UserInfo{Username: user, Groups: []string{"system:authenticated"}}
			return nil
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := ctx.Deadline(); !ok {
				t.Errorf("a patch to the hub without a deadline")
			}
			data, err := patch.Data(obj)
			if err != nil {
				return err
			}
			h.patches = append(h.patches, string(data))
			o := &client.PatchOptions{}
			o.ApplyOptions(opts)
			h.dryRuns = append(h.dryRuns, o.DryRun)
			if beforePatch != nil {
				if err := beforePatch(ctx, c, len(h.patches)); err != nil {
					return err
				}
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	}, objs...)()
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	return h
}

// decisionOf is the decision stored on ClusterJob name of namespace ops.
func (h *decisionHub) decisionOf(t *testing.T, name string) *fleetv1.ApprovalDecision {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hubTimeout)
	defer cancel()
	cj := &fleetv1.ClusterJob{}
	if err := h.c.Get(ctx, client.ObjectKey{Namespace: "ops", Name: name}, cj); err != nil {
		t.Fatal(err)
	}
	if cj.Spec.Approval == nil {
		return nil
	}
	return cj.Spec.Approval.Decision
}

// decideBy has bob write decision on ClusterJob name before the first
// patch, as if he decided between the command's read and its write.
func decideBy(name string, decision fleetv1.ApprovalDecision) func(context.Context, client.WithWatch, int) error {
	return func(ctx context.Context, c client.WithWatch, call int) error {
		if call > 1 {
			return nil
		}
		cj := &fleetv1.ClusterJob{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "ops", Name: name}, cj); err != nil {
			return err
		}
		cj.Spec.Approval.Decision = &decision
		return c.Update(ctx, cj)
	}
}

func approveCmd(o *options) *cobra.Command { return newDecide(o, true) }
func rejectCmd(o *options) *cobra.Command  { return newDecide(o, false) }

func TestDecide(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	bobApproved := &fleetv1.ApprovalDecision{Approved: true, User: "bob", Reason: "canary is fine"}
	bobRejected := &fleetv1.ApprovalDecision{Approved: false, User: "bob", Reason: "disks full"}
	for _, tc := range []struct {
		name        string
		cj          *fleetv1.ClusterJob
		user        string // "" : the hub serves no SelfSubjectReview
		beforePatch func(context.Context, client.WithWatch, int) error
		build       func(*options) *cobra.Command
		args        []string
		wantOut     string
		wantErr     string
		wantCode    int
		// wantPatches are the patches sent, without their resourceVersion.
		wantPatches  []string
		wantDecision *fleetv1.ApprovalDecision
	}{
		{
			name: "approve writes the decision as the user the hub authenticates",
			cj:   awaiting("clean", fleetv1.PhaseRunning, nil), user: "alice@example.com",
			build: approveCmd, args: []string{"clean", "--reason", "  canary is fine  "},
			wantOut:      "clusterjob.fleetjob.io/clean approved\n",
			wantPatches:  []string{`{"spec":{"approval":{"decision":{"approved":true,"user":"alice@example.com","reason":"canary is fine"}}}}`},
			wantDecision: &fleetv1.ApprovalDecision{Approved: true, User: "alice@example.com", Reason: "canary is fine"},
		},
		{
			name: "approve without a reason",
			cj:   awaiting("clean", fleetv1.PhasePending, nil), user: "alice",
			build: approveCmd, args: []string{"clean"},
			wantOut:      "clusterjob.fleetjob.io/clean approved\n",
			wantPatches:  []string{`{"spec":{"approval":{"decision":{"approved":true,"user":"alice"}}}}`},
			wantDecision: &fleetv1.ApprovalDecision{Approved: true, User: "alice"},
		},
		{
			name: "reject writes approved false with the reason",
			cj:   awaiting("clean", fleetv1.PhaseRunning, nil), user: "alice",
			build: rejectCmd, args: []string{"clean", "--reason", `disks "full"`},
			wantOut:      "clusterjob.fleetjob.io/clean rejected\n",
			wantPatches:  []string{`{"spec":{"approval":{"decision":{"approved":false,"user":"alice","reason":"disks \"full\""}}}}`},
			wantDecision: &fleetv1.ApprovalDecision{Approved: false, User: "alice", Reason: `disks "full"`},
		},
		{
			name: "reject without --reason is a usage error, before the hub is asked",
			cj:   awaiting("clean", fleetv1.PhaseRunning, nil), user: "alice",
			build: rejectCmd, args: []string{"clean", "--reason", " "},
			wantErr: "reject needs --reason", wantCode: ExitUsage,
		},
		{
			name: "a reason longer than the CRD takes",
			cj:   awaiting("clean", fleetv1.PhaseRunning, nil), user: "alice",
			build: approveCmd, args: []string{"clean", "--reason", strings.Repeat("é", 1025)},
			wantErr: "--reason is 1025 characters long: the ClusterJob keeps at most 1024", wantCode: ExitUsage,
		},
		{
			name: "no spec.approval",
			cj:   wrappers.MakeClusterJob("clean", "ops").Obj(), user: "alice",
			build: approveCmd, args: []string{"clean"},
			wantErr: "clusterjob ops/clean has no spec.approval: there is nothing to approve", wantCode: ExitError,
		},
		{
			name: "no such ClusterJob",
			cj:   awaiting("clean", fleetv1.PhaseRunning, nil), user: "alice",
			build: rejectCmd, args: []string{"dirty", "--reason", "x"},
			wantErr: "clusterjob ops/dirty not found on the hub", wantCode: ExitAPI,
		},
		{
			name: "decided the other way: a decision is final",
			cj:   awaiting("clean", fleetv1.PhaseRunning, bobApproved), user: "alice",
			build: rejectCmd, args: []string{"clean", "--reason", "too late"},
			wantErr: "clusterjob ops/clean was already approved by bob (canary is fine): a decision is final", wantCode: ExitError,
			wantDecision: bobApproved,
		},
		{
			name: "decided the same way: nothing changes, not even the user",
			cj:   awaiting("clean", fleetv1.PhaseFailed, bobRejected), user: "alice",
			build: rejectCmd, args: []string{"clean", "--reason", "agreed"},
			wantOut:      "clusterjob.fleetjob.io/clean already rejected by bob (disks full): nothing changed\n",
			wantDecision: bobRejected,
		},
		{
			name: "a run that ended undecided",
			cj: func() *fleetv1.ClusterJob {
				cj := awaiting("clean", fleetv1.PhaseFailed, nil)
				cj.Status.Conditions = []metav1.Condition{{Type: fleetv1.ConditionFailed, Status: metav1.ConditionTrue, Reason: fleetv1.ReasonApprovalTimeout}}
				return cj
			}(),
			user:  "alice",
			build: approveCmd, args: []string{"clean"},
			wantErr: "clusterjob ops/clean already ended Failed (ApprovalTimeout): there is nothing left to approve", wantCode: ExitError,
		},
		{
			name: "someone decided the same way meanwhile: the conflict is read again and told",
			cj:   awaiting("clean", fleetv1.PhaseRunning, nil), user: "alice",
			beforePatch: decideBy("clean", *bobApproved),
			build:       approveCmd, args: []string{"clean"},
			wantOut:      "clusterjob.fleetjob.io/clean already approved by bob (canary is fine): nothing changed\n",
			wantPatches:  []string{`{"spec":{"approval":{"decision":{"approved":true,"user":"alice"}}}}`},
			wantDecision: bobApproved,
		},
		{
			name: "someone decided the other way meanwhile",
			cj:   awaiting("clean", fleetv1.PhaseRunning, nil), user: "alice",
			beforePatch: decideBy("clean", *bobRejected),
			build:       approveCmd, args: []string{"clean"},
			wantErr:      "clusterjob ops/clean was already rejected by bob (disks full): a decision is final",
			wantCode:     ExitError,
			wantPatches:  []string{`{"spec":{"approval":{"decision":{"approved":true,"user":"alice"}}}}`},
			wantDecision: bobRejected,
		},
		{
			name: "the hub wrote the status meanwhile: read again, written again",
			cj:   awaiting("clean", fleetv1.PhaseRunning, nil), user: "alice",
			beforePatch: func(ctx context.Context, c client.WithWatch, call int) error {
				if call > 1 {
					return nil
				}
				cj := &fleetv1.ClusterJob{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: "ops", Name: "clean"}, cj); err != nil {
					return err
				}
				cj.Status.Phase = fleetv1.PhaseRunning
				cj.Status.Conditions = []metav1.Condition{{Type: fleetv1.ConditionApproved, Status: metav1.ConditionUnknown, Reason: fleetv1.ReasonAwaitingApproval}}
				return c.Update(ctx, cj)
			},
			build: approveCmd, args: []string{"clean"},
			wantOut: "clusterjob.fleetjob.io/clean approved\n",
			wantPatches: []string{`{"spec":{"approval":{"decision":{"approved":true,"user":"alice"}}}}`,
				`{"spec":{"approval":{"decision":{"approved":true,"user":"alice"}}}}`},
			wantDecision: &fleetv1.ApprovalDecision{Approved: true, User: "alice"},
		},
		{
			name:  "a hub that cannot say who you are",
			cj:    awaiting("clean", fleetv1.PhaseRunning, nil),
			build: approveCmd, args: []string{"clean"},
			wantErr: "asking the hub who you are (a SelfSubjectReview", wantCode: ExitError,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newDecisionHub(t, tc.user, tc.beforePatch, tc.cj)
			out, _, err := runOn(t, kubeconfig, onHub(h.c, tc.build), tc.args...)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got := ExitCode(err); got != tc.wantCode {
				t.Errorf("exit code %d, want %d", got, tc.wantCode)
			}
			if diff := cmp.Diff(tc.wantOut, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			var patches []string
			for _, p := range h.patches {
				patches = append(patches, withoutResourceVersion(t, p, tc.cj.Name))
			}
			if diff := cmp.Diff(tc.wantPatches, patches); diff != "" {
				t.Errorf("patches sent (-want +got):\n%s", diff)
			}
			if tc.wantCode == ExitUsage && h.reviews > 0 {
				t.Errorf("a usage error asked the hub who you are")
			}
			if diff := cmp.Diff(tc.wantDecision, h.decisionOf(t, tc.cj.Name)); diff != "" {
				t.Errorf("stored decision (-want +got):\n%s", diff)
			}
		})
	}
}

// withoutResourceVersion is patch without its metadata, which must be the
// resourceVersion the command read: the write is conditional on it.
func withoutResourceVersion(t *testing.T, patch, name string) string {
	t.Helper()
	var p map[string]json.RawMessage
	if err := json.Unmarshal([]byte(patch), &p); err != nil {
		t.Fatalf("patch %s: %v", patch, err)
	}
	var m struct {
		ResourceVersion string `json:"resourceVersion"`
	}
	if err := json.Unmarshal(p["metadata"], &m); err != nil || m.ResourceVersion == "" {
		t.Errorf("patch %s of %s is not conditional on a resourceVersion", patch, name)
	}
	delete(p, "metadata")
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestDecideDryRun: a client dry run sends no patch and prints the
// ClusterJob as it would be; a server dry run sends the patch with
// dryRun=All; neither stores a decision.
func TestDecideDryRun(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	for _, tc := range []struct {
		name        string
		build       func(*options) *cobra.Command
		args        []string
		wantOut     string
		wantPatches int
	}{
		{name: "approve, client", build: approveCmd, args: []string{"clean", "--dry-run=client"},
			wantOut: "clusterjob.fleetjob.io/clean approved (dry run)\n"},
		{name: "reject, client, as it would be patched", build: rejectCmd,
			args:    []string{"clean", "--reason", "no", "--dry-run=client", "-o", "jsonpath={.spec.approval.decision}"},
			wantOut: `{"approved":false,"reason":"no","user":"alice"}`},
		{name: "approve, server", build: approveCmd, args: []string{"clean", "--dry-run=server"},
			wantOut: "clusterjob.fleetjob.io/clean approved (server dry run)\n", wantPatches: 1},
		{name: "reject, server, printed", build: rejectCmd, args: []string{"clean", "--reason", "no", "--dry-run=server", "-o", "name"},
			wantOut: "clusterjob.fleetjob.io/clean\n", wantPatches: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newDecisionHub(t, "alice", nil, awaiting("clean", fleetv1.PhaseRunning, nil))
			out, _, err := runOn(t, kubeconfig, onHub(h.c, tc.build), tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantOut, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if len(h.patches) != tc.wantPatches {
				t.Errorf("%d patches sent, want %d", len(h.patches), tc.wantPatches)
			}
			for _, d := range h.dryRuns {
				if diff := cmp.Diff([]string{metav1.DryRunAll}, d); diff != "" {
					t.Errorf("a server dry run's patch (-want +got dryRun):\n%s", diff)
				}
			}
			if d := h.decisionOf(t, "clean"); d != nil {
				t.Errorf("a dry run stored decision %+v", d)
			}
		})
	}
}
