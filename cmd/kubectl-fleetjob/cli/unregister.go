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
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/member"
)

type unregisterOptions struct {
	*options
	member        memberFlags
	name          string
	purge         bool
	workNamespace string
	dryRunFlag    string
	dryRun        dryRun
}

func newUnregister(o *options) *cobra.Command {
	u := &unregisterOptions{options: o}
	cmd := &cobra.Command{
		Use:   "unregister NAME [--purge --member-context CONTEXT]",
		Short: "Remove a member cluster's registration from the hub",
		Long: `Delete the registration Secret of a member cluster from the hub: the hub
stops using the member (runs in progress report it unreachable).

With --purge, also delete what register created in the member: the hub's
ServiceAccount in namespace fleetjob-hub (which revokes its tokens; the
namespace stays, for other registrations' identities), the ServiceAccount
fleetjob-hub of a registration never migrated, the Role, the ClusterRole and
their bindings, and the work namespace with everything in it.

--dry-run=client reads the registration and lists what would be deleted,
asking the member nothing; --dry-run=server sends every delete with
dryRun=All, on the hub and in the member, and lists what they would
delete.`,
		Example: `  kubectl fleetjob unregister eu-1
  kubectl fleetjob unregister eu-1 --purge --member-context kind-eu-1
  kubectl fleetjob unregister eu-1 --purge --member-context kind-eu-1 --dry-run=server`,
		Args:              exactlyOne("NAME", "the cluster name"),
		ValidArgsFunction: completeRegistrations(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			u.name = args[0]
			if u.purge && !u.member.set() {
				return usage(errors.New("--purge needs --member-context: the hub holds no rights to delete anything in the member"))
			}
			if err := validateWorkNamespace(u.workNamespace); err != nil {
				return usage(err)
			}
			var err error
			if u.dryRun, err = parseDryRun(u.dryRunFlag, u.streams.ErrOut); err != nil {
				return err
			}
			return u.run(cmd.Context())
		},
	}
	flags := cmd.Flags()
	u.member.addFlags(flags)
	flags.BoolVar(&u.purge, "purge", false, "Also delete the member's fleetjob ServiceAccount, RBAC and work namespace")
	addWorkNamespaceFlag(flags, &u.workNamespace, "Member work namespace to purge when the hub no longer has the registration")
	addDryRunFlag(cmd, &u.dryRunFlag, "read the registration and list what would be deleted, asking the member nothing")
	return cmd
}

func (u *unregisterOptions) run(ctx context.Context) error {
	hubCS, err := u.hubClientset()
	if err != nil {
		return err
	}
	ns, err := u.deleteRegistration(ctx, hubCS)
	if err != nil {
		return err
	}
	if !u.purge {
		fmt.Fprintf(u.streams.Out, "the member keeps namespace %s and serviceaccount %s/%s; its token stays valid until it expires (run with --purge --member-context CONTEXT to remove them)\n", ns, member.HubNamespace, member.ServiceAccountName(ns))
		return nil
	}
	cfg, memberCtx, err := u.member.restConfig(u.options)
	if err != nil {
		return err
	}
	if u.dryRun == dryRunClient {
		fmt.Fprintf(u.streams.Out, "member context %s: would delete, where they exist: %s (dry run)\n", memberCtx, strings.Join(member.PurgeCandidates(ns), ", "))
		return nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	purge := member.Purge
	if u.dryRun == dryRunServer {
		purge = member.PurgeServerDryRun
	}
	deleted, err := purge(ctx, cs, ns)
	for _, d := range deleted {
		fmt.Fprintf(u.streams.Out, "member context %s: %s deleted%s\n", memberCtx, d, u.dryRun.suffix())
	}
	if err != nil {
		return fmt.Errorf("member context %s: %w", memberCtx, err)
	}
	if len(deleted) == 0 {
		fmt.Fprintf(u.streams.Out, "member context %s: nothing of fleetjob's left in namespace %s\n", memberCtx, ns)
	}
	return nil
}

// deleteRegistration deletes the hub Secret and returns the member work
// namespace it named. A missing Secret is an error unless purging, which
// may finish an earlier unregister.
func (u *unregisterOptions) deleteRegistration(ctx context.Context, cs kubernetes.Interface) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	secrets := cs.CoreV1().Secrets(u.registrationNamespace)
	s, err := secrets.Get(ctx, u.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && u.purge:
		fmt.Fprintf(u.streams.Out, "cluster %q has no registration on the hub; purging namespace %s in the member\n", u.name, u.workNamespace)
		return u.workNamespace, nil
	case apierrors.IsNotFound(err):
		return "", explain(err, "cluster %q is not registered: no secret %s/%s on the hub (see kubectl fleetjob clusters)", u.name, u.registrationNamespace, u.name)
	case err != nil:
		return "", fmt.Errorf("reading secret %s/%s on the hub: %w", u.registrationNamespace, u.name, err)
	}
	ns := u.workNamespace
	if reg, err := hub.Read(s); err == nil {
		ns = reg.Namespace
	}
	if u.dryRun != dryRunClient {
		if err := secrets.Delete(ctx, u.name, metav1.DeleteOptions{DryRun: u.dryRun.options()}); client404(err) != nil {
			return "", fmt.Errorf("deleting secret %s/%s on the hub: %w", u.registrationNamespace, u.name, err)
		}
	}
	fmt.Fprintf(u.streams.Out, "secret/%s deleted from namespace %s on the hub%s\n", u.name, u.registrationNamespace, u.dryRun.suffix())
	return ns, nil
}

// client404 treats a resource already gone as done.
func client404(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
