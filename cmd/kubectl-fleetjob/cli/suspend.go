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
	return &cobra.Command{
		Use:     use + " NAME",
		Short:   short,
		Example: "  kubectl fleetjob " + use + " clean-disks",
		Args:    exactlyOne("NAME", "the ClusterJob name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.hubClient()
			if err != nil {
				return err
			}
			ns, err := o.namespace()
			if err != nil {
				return err
			}
			cj := &fleetv1.ClusterJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: args[0]}}
			patch := fmt.Appendf(nil, `{"spec":{"suspend":%t}}`, suspend)
			err = c.Patch(cmd.Context(), cj, client.RawPatch(types.MergePatchType, patch))
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("clusterjob %s/%s not found on the hub (see kubectl get clusterjobs -n %s)", ns, args[0], ns)
			}
			if err != nil {
				return fmt.Errorf("patching clusterjob %s/%s: %w", ns, args[0], err)
			}
			_, err = fmt.Fprintf(o.streams.Out, "clusterjob.fleetjob.io/%s %s\n", args[0], done)
			return err
		},
	}
}
