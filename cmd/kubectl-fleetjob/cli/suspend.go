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
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// newSuspend is `suspend` (suspend true) or `resume` (false): a merge patch
// of spec.suspend, the one mutable field.
func newSuspend(o *options, suspend bool) *cobra.Command {
	use, short, done := "resume", "Resume a suspended ClusterJob: start groups again", "resumed"
	if suspend {
		use, short, done = "suspend", "Suspend a ClusterJob: start no new group (running Jobs finish)", "suspended"
	}
	var dryRunFlag string
	out := newObjectOutputFlags()
	cmd := &cobra.Command{
		Use:   use + " NAME [--dry-run=client|server] [-o FORMAT]",
		Short: short,
		Long: short + `.

A merge patch of spec.suspend. --dry-run=client reads the ClusterJob and
changes nothing; --dry-run=server sends the patch with dryRun=All. -o
prints the ClusterJob as patched.`,
		Example:           "  kubectl fleetjob " + use + " clean-disks\n  kubectl fleetjob " + use + " clean-disks --dry-run=server -o jsonpath='{.spec.suspend}'",
		Args:              exactlyOne("NAME", "the ClusterJob name"),
		ValidArgsFunction: completeClusterJobs(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			dryRun, err := parseDryRun(dryRunFlag, o.streams.ErrOut)
			if err != nil {
				return err
			}
			if err := out.validate(); err != nil {
				return err
			}
			cj, err := o.setSuspend(cmd.Context(), args[0], suspend, dryRun)
			if err != nil {
				return err
			}
			if !out.human() {
				cj.SetGroupVersionKind(fleetv1.GroupVersion.WithKind("ClusterJob"))
				return out.printObject(cj, o.streams.Out)
			}
			_, err = fmt.Fprintf(o.streams.Out, "clusterjob.fleetjob.io/%s %s%s\n", args[0], done, dryRun.suffix())
			return err
		},
	}
	addDryRunFlag(cmd, &dryRunFlag, "read the ClusterJob and change nothing")
	out.addFlags(cmd)
	return cmd
}

// setSuspend patches spec.suspend of ClusterJob name within hubTimeout,
// and returns it as patched; a client dry run patches the copy it read.
func (o *options) setSuspend(ctx context.Context, name string, suspend bool, dryRun dryRun) (*fleetv1.ClusterJob, error) {
	c, err := o.hubClient()
	if err != nil {
		return nil, err
	}
	ns, err := o.namespace()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	cj := &fleetv1.ClusterJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if dryRun == dryRunClient {
		if cj, err = o.getClusterJob(ctx, c, name); err != nil {
			return nil, err
		}
		cj.Spec.Suspend = &suspend
		return cj, nil
	}
	patch := fmt.Appendf(nil, `{"spec":{"suspend":%t}}`, suspend)
	err = c.Patch(ctx, cj, client.RawPatch(types.MergePatchType, patch), &client.PatchOptions{DryRun: dryRun.options()})
	if apierrors.IsNotFound(err) {
		return nil, explain(err, "clusterjob %s/%s not found on the hub (see kubectl get clusterjobs -n %s)", ns, name, ns)
	}
	if err != nil {
		return nil, fmt.Errorf("patching clusterjob %s/%s: %w", ns, name, err)
	}
	return cj, nil
}
