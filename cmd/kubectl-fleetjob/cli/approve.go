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
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// maxReasonLength is the longest spec.approval.decision.reason the CRD
// takes, in characters.
const maxReasonLength = 1024

type decideOptions struct {
	*options
	approved   bool
	reason     string
	dryRunFlag string
	dryRun     dryRun
	out        *outputFlags
}

// newDecide is `approve` (approved true) or `reject` (false): the decision
// a run with spec.approval waits for after its canary clusters, written in
// the name of the user the hub authenticates.
func newDecide(o *options, approved bool) *cobra.Command {
	d := &decideOptions{options: o, approved: approved, out: newObjectOutputFlags()}
	use, reasonUse := "approve", "[--reason TEXT]"
	short := "Approve a ClusterJob held after its canary clusters: the other clusters start"
	reasonHelp := "Why the run may go on, kept in the decision and shown in the ClusterJob's Approved condition"
	example := `  kubectl fleetjob approve clean-disks
  kubectl fleetjob approve clean-disks --reason "canary clean, dashboards green"
  kubectl fleetjob approve clean-disks --dry-run=server -o jsonpath='{.spec.approval.decision}'`
	if !approved {
		use, reasonUse = "reject", "--reason TEXT"
		short = "Reject a ClusterJob held after its canary clusters: the run ends Failed"
		reasonHelp = "Why the run stops (required), kept in the decision and shown in the ClusterJob's Approved condition"
		example = `  kubectl fleetjob reject clean-disks --reason "canary nodes lost their disks"
  kubectl fleetjob reject clean-disks --reason "wrong image" --dry-run=client -o yaml`
	}
	cmd := &cobra.Command{
		Use:   use + " NAME " + reasonUse + " [--dry-run=client|server] [-o FORMAT]",
		Short: short,
		Long: short + `.

A ClusterJob with spec.approval runs its canary clusters first and holds
every other cluster until a person approves it (the others start) or
rejects it (the run ends Failed, reason Rejected). The decision goes to
spec.approval.decision with your user name as the hub authenticates you
(a SelfSubjectReview), which the hub's admission policy
fleetjob-approvals checks; --reason is kept with it. reject needs
--reason. A decision is final: deciding the same way again changes
nothing, the other way is refused. A decision may be written before the
canary ended, to let the run go on without waiting.

The write is a merge patch of spec.approval.decision, conditional on the
ClusterJob's resourceVersion: if someone decided meanwhile, the command
says who. --dry-run=client reads the ClusterJob and who you are, and
changes nothing; --dry-run=server sends the patch with dryRun=All, so the
hub's validation and admission policies check it. -o prints the
ClusterJob as patched.`,
		Example:           example,
		Args:              exactlyOne("NAME", "the ClusterJob name"),
		ValidArgsFunction: completeClusterJobs(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := d.validate(); err != nil {
				return err
			}
			return d.run(cmd.Context(), args[0])
		},
	}
	cmd.Flags().StringVar(&d.reason, "reason", "", reasonHelp)
	addDryRunFlag(cmd, &d.dryRunFlag, "read the ClusterJob and who you are, and change nothing")
	d.out.addFlags(cmd)
	return cmd
}

// verb is the command's name: approve or reject.
func (d *decideOptions) verb() string {
	if d.approved {
		return "approve"
	}
	return "reject"
}

// validate checks the flags before the hub is asked anything.
func (d *decideOptions) validate() error {
	d.reason = strings.TrimSpace(d.reason)
	switch n := utf8.RuneCountInString(d.reason); {
	case !d.approved && n == 0:
		return usagef("reject needs --reason: say why the run stops, for whoever reads its Approved condition")
	case n > maxReasonLength:
		return usagef("--reason is %d characters long: the ClusterJob keeps at most %d", n, maxReasonLength)
	}
	var err error
	if d.dryRun, err = parseDryRun(d.dryRunFlag, d.streams.ErrOut); err != nil {
		return err
	}
	return d.out.validate()
}

// run decides, and prints the ClusterJob with -o, else what was done.
func (d *decideOptions) run(ctx context.Context, name string) error {
	cj, already, err := d.decide(ctx, name)
	if err != nil {
		return err
	}
	if !d.out.human() {
		cj.SetGroupVersionKind(fleetv1.GroupVersion.WithKind("ClusterJob"))
		return d.out.printObject(cj, d.streams.Out)
	}
	if already {
		_, err = fmt.Fprintf(d.streams.Out, "clusterjob.fleetjob.io/%s already %s: nothing changed%s\n", name, decided(cj.Spec.Approval.Decision), d.dryRun.suffix())
		return err
	}
	done := "approved"
	if !d.approved {
		done = "rejected"
	}
	_, err = fmt.Fprintf(d.streams.Out, "clusterjob.fleetjob.io/%s %s%s\n", name, done, d.dryRun.suffix())
	return err
}

// decide writes the decision on ClusterJob name within hubTimeout, and
// returns the ClusterJob as patched (a client dry run: the copy it read,
// with the decision), and already true when it held that answer before.
// A conflict of the write (the ClusterJob changed since it was read: a
// decision, or only the hub's status) reads it again once, and writes
// again if it is still undecided.
func (d *decideOptions) decide(ctx context.Context, name string) (*fleetv1.ClusterJob, bool, error) {
	c, err := d.hubClient()
	if err != nil {
		return nil, false, err
	}
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	cj, err := d.getClusterJob(ctx, c, name)
	if err != nil {
		return nil, false, err
	}
	if already, err := d.decidable(cj); already || err != nil {
		return cj, already, err
	}
	user, err := whoAmI(ctx, c)
	if err != nil {
		return nil, false, err
	}
	decision := fleetv1.ApprovalDecision{Approved: d.approved, User: user, Reason: d.reason}
	if d.dryRun == dryRunClient {
		cj.Spec.Approval.Decision = &decision
		return cj, false, nil
	}
	for reread := false; ; reread = true {
		err = patchDecision(ctx, c, cj, decision, d.dryRun)
		switch {
		case err == nil:
			return cj, false, nil
		case apierrors.IsConflict(err) && !reread:
			if cj, err = d.getClusterJob(ctx, c, name); err != nil {
				return nil, false, err
			}
			if already, err := d.decidable(cj); already || err != nil {
				return cj, already, err
			}
		case apierrors.IsConflict(err):
			return nil, false, explain(err, "clusterjob %s/%s changed twice while you decided, and is still undecided: run %s again", cj.Namespace, name, d.verb())
		case apierrors.IsNotFound(err):
			return nil, false, explain(err, "clusterjob %s/%s not found on the hub: it was deleted", cj.Namespace, name)
		default:
			return nil, false, fmt.Errorf("writing the decision on clusterjob %s/%s: %w", cj.Namespace, name, err)
		}
	}
}

// decidable tells whether cj may take the answer: already true when it
// holds that answer; an error when it has no approval, another answer, or
// has ended undecided.
func (d *decideOptions) decidable(cj *fleetv1.ClusterJob) (already bool, err error) {
	a := cj.Spec.Approval
	switch {
	case a == nil:
		return false, fmt.Errorf("clusterjob %s/%s has no spec.approval: there is nothing to %s", cj.Namespace, cj.Name, d.verb())
	case a.Decision != nil && a.Decision.Approved == d.approved:
		return true, nil
	case a.Decision != nil:
		return false, fmt.Errorf("clusterjob %s/%s was already %s: a decision is final", cj.Namespace, cj.Name, decided(a.Decision))
	case cj.Status.Phase.IsFinished():
		return false, fmt.Errorf("clusterjob %s/%s already ended %s%s: there is nothing left to %s", cj.Namespace, cj.Name, cj.Status.Phase, endReason(cj), d.verb())
	}
	return false, nil
}

// decided is a decision for a person: "approved by alice (looks fine)".
func decided(d *fleetv1.ApprovalDecision) string {
	s := "rejected by " + d.User
	if d.Approved {
		s = "approved by " + d.User
	}
	if d.Reason != "" {
		s += " (" + d.Reason + ")"
	}
	return s
}

// endReason is " (REASON)" of an ended run's Failed or Complete condition,
// such as ApprovalTimeout; "" without one.
func endReason(cj *fleetv1.ClusterJob) string {
	for _, t := range []string{fleetv1.ConditionFailed, fleetv1.ConditionComplete} {
		if c := meta.FindStatusCondition(cj.Status.Conditions, t); c != nil && c.Status == metav1.ConditionTrue && c.Reason != "" {
			return " (" + c.Reason + ")"
		}
	}
	return ""
}

// decisionPatch is the merge patch of a decision: conditional on the
// resourceVersion read, so that a decision written meanwhile is a
// Conflict rather than overwritten or refused as a change.
type decisionPatch struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec struct {
		Approval struct {
			Decision fleetv1.ApprovalDecision `json:"decision"`
		} `json:"approval"`
	} `json:"spec"`
}

// patchDecision writes decision on cj, as read, and leaves in cj the
// ClusterJob as the hub answered.
func patchDecision(ctx context.Context, c client.Client, cj *fleetv1.ClusterJob, decision fleetv1.ApprovalDecision, dryRun dryRun) error {
	var p decisionPatch
	p.Metadata.ResourceVersion = cj.ResourceVersion
	p.Spec.Approval.Decision = decision
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return c.Patch(ctx, cj, client.RawPatch(types.MergePatchType, data), &client.PatchOptions{DryRun: dryRun.options()})
}

// whoAmI is the user name the hub authenticates the plugin's requests as,
// from a SelfSubjectReview: what the admission policy compares the
// decision's user with (impersonation, --as, included).
func whoAmI(ctx context.Context, c client.Client) (string, error) {
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return "", fmt.Errorf("asking the hub who you are (a SelfSubjectReview, which every authenticated user may create): %w", err)
	}
	if review.Status.UserInfo.Username == "" {
		return "", fmt.Errorf("the hub authenticates you without a user name (SelfSubjectReview): a decision must name who decided")
	}
	return review.Status.UserInfo.Username, nil
}
