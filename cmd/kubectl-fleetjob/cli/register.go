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
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/member"
	"github.com/fleetjob/fleetjob/pkg/kubeconfig"
)

// DryRunToken stands for the token in --dry-run output.
const DryRunToken = "<minted at apply time>"

// redactedToken stands for the token in -o output after a real run.
const redactedToken = "<redacted>"

type registerOptions struct {
	*options
	member        memberFlags
	name          string
	workNamespace string
	labelArgs     []string
	labels        map[string]string
	clusterSet    string
	// set is the cluster set the registration is in: --cluster-set, the
	// one a --label names, or the default set.
	set           string
	server        string
	tokenDuration time.Duration
	dryRunFlag    string
	dryRun        dryRun
	output        string
}

func newRegister(o *options) *cobra.Command {
	r := &registerOptions{options: o}
	cmd := &cobra.Command{
		Use:   "register NAME --member-context CONTEXT [--cluster-set SET]",
		Short: "Register a member cluster with a least-privilege identity",
		Long: `Register a member cluster with the hub (the current context).

In the member, register applies (server-side, idempotent) the work namespace,
the hub's identity: ServiceAccount for-<work namespace> in namespace fleetjob-hub,
where no Job runs, so no pod a ClusterJob creates can run as it, a Role on
Jobs and ConfigMaps in the work namespace, and a ClusterRole that reads nodes.
It mints a token for the ServiceAccount, builds a kubeconfig with the member's
CA and that token, and proves with SelfSubjectAccessReviews made with the
token that it may do what the hub needs and may not read Secrets, run pods,
change nodes or work in other namespaces; and with SubjectAccessReviews that
no ServiceAccount of the work namespace (default and any other there), which
a ClusterJob's pods may run as, may change Jobs, ConfigMaps or pods there or
take the hub's identity. Only then does it write the registration Secret on
the hub.

A member registered before the identity moved has ServiceAccount
fleetjob-hub in the work namespace: register migrates it. The bindings name
both identities until the hub's Secret holds the new token; then the old
ServiceAccount is deleted, which invalidates every token issued for it, and
register proves it may do nothing more.

The cluster is in one cluster set: --cluster-set SET labels the registration
fleetjob.io/cluster-set=SET; without it the cluster is in the set default.
ClusterJobs reach it only from namespaces the set is bound to (see kubectl
fleetjob bind). The work namespace is labelled
pod-security.kubernetes.io/enforce with the Pod Security level of the set's
ClusterSet on the hub (baseline when the set has none), so the member
enforces the level the hub checks pod templates against; Kubernetes' own
namespaces (default, kube-*) are left unlabelled.

Where the set's ClusterSet allows drains (spec.allowDrain), register also
binds ClusterRole fleetjob-hub-drain, which may patch nodes, list pods and
create pods/eviction in every namespace, to the hub's identity; where it does
not, register deletes that binding: run it again after turning allowDrain off
to revoke drains.

Running it again changes nothing but the token, and the work namespace's
level if the set's has changed: run it before the token expires to rotate
it, and after changing a ClusterSet's podSecurity. Each run sets the
registration's labels and set anew: a run without --cluster-set puts the
cluster back in the set default.

--dry-run=client prints what would be applied and written, and changes
nothing (the hub is read for the set's Pod Security level). --dry-run=server
sends the member objects and the hub Secret with dryRun=All: the member and
the hub check that you may write them and store nothing; objects in a
namespace that does not exist yet cannot be checked, and no token is minted
or verified.`,
		Example: `  # Register the cluster of context kind-eu-1 as eu-1, selectable by env and region
  kubectl fleetjob register eu-1 --member-context kind-eu-1 --label env=prod --label region=eu

  # Register eu-2 in the cluster set team-a, with the set's Pod Security level
  kubectl fleetjob register eu-2 --member-context kind-eu-2 --cluster-set team-a

  # A kind member: the hub reaches it on the kind network, not on localhost
  kubectl fleetjob register eu-1 --member-context kind-eu-1 --server https://eu-1-control-plane:6443

  # Print the member RBAC and the hub Secret for GitOps, changing nothing
  kubectl fleetjob register eu-1 --member-context kind-eu-1 --dry-run=client -o yaml

  # Check that you may write everything, in the member and on the hub
  kubectl fleetjob register eu-1 --member-context kind-eu-1 --dry-run=server`,
		Args:              exactlyOne("NAME", "the cluster name"),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			r.name = args[0]
			if err := r.validate(); err != nil {
				return err
			}
			return r.run(cmd.Context())
		},
	}
	flags := cmd.Flags()
	r.member.addFlags(flags)
	addWorkNamespaceFlag(flags, &r.workNamespace, "Member namespace where the hub runs its Jobs")
	flags.StringArrayVar(&r.labelArgs, "label", nil, "Label key=value of the registration, for spec.clusterSelector (repeatable)")
	flags.StringVar(&r.clusterSet, "cluster-set", "", "Cluster set of the cluster, as the registration label "+fleetv1.ClusterSetLabel+" (default: the set "+fleetv1.DefaultClusterSet+")")
	flags.StringVar(&r.server, "server", "", "Member API server URL as the hub reaches it (default: the member context's server)")
	flags.DurationVar(&r.tokenDuration, "token-duration", 365*24*time.Hour, "Requested lifetime of the hub's token; the member may grant less")
	addDryRunFlag(cmd, &r.dryRunFlag, "print what would be applied and change nothing (the hub is read for the set's Pod Security level)")
	flags.StringVarP(&r.output, "output", "o", "", "Print the objects as yaml or json (the token redacted)")
	return cmd
}

// exactlyOne accepts one positional argument and names it when missing.
func exactlyOne(arg, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usagef("%s takes exactly one argument, %s (%s); got %d", cmd.CommandPath(), arg, what, len(args))
		}
		return nil
	}
}

func (r *registerOptions) validate() error {
	if err := hub.ValidateName(r.name); err != nil {
		return usage(err)
	}
	if err := validateWorkNamespace(r.workNamespace); err != nil {
		return usage(err)
	}
	if r.tokenDuration < member.MinTokenDuration {
		return usagef("--token-duration %s is shorter than the %s the TokenRequest API allows", r.tokenDuration, member.MinTokenDuration)
	}
	var err error
	if r.labels, err = hub.ParseLabels(r.labelArgs); err != nil {
		return usage(err)
	}
	if r.set, err = hub.JoinSet(r.labels, r.clusterSet); err != nil {
		return usage(err)
	}
	if r.dryRun, err = parseDryRun(r.dryRunFlag, r.streams.ErrOut); err != nil {
		return err
	}
	return checkOutput(r.output, "yaml", "json")
}

func (r *registerOptions) run(ctx context.Context) error {
	memberCfg, memberCtx, err := r.member.restConfig(r.options)
	if err != nil {
		return err
	}
	memberCS, err := kubernetes.NewForConfig(memberCfg)
	if err != nil {
		return err
	}
	ep, err := r.endpoint(ctx, memberCfg, memberCS)
	if err != nil {
		return err
	}
	policy, err := r.setPolicy(ctx)
	if err != nil {
		return err
	}
	objs := member.Build(r.workNamespace, policy.PodSecurity, policy.AllowDrain)
	if r.dryRun == dryRunClient {
		return r.printDryRun(memberCtx, objs, ep, policy)
	}
	hubCS, err := r.hubClientset()
	if err != nil {
		return err
	}
	if err := r.checkHub(ctx, hubCS); err != nil {
		return err
	}
	if r.dryRun == dryRunServer {
		return r.serverDryRun(ctx, memberCtx, memberCS, hubCS, objs, ep, policy)
	}
	reg, proof, err := r.prepareMember(ctx, memberCtx, memberCfg, memberCS, objs, ep)
	if err != nil {
		return err
	}
	if proof.created, err = r.writeRegistration(ctx, hubCS, reg); err != nil {
		return err
	}
	if proof.legacy {
		if proof.revoked, err = r.revokeLegacy(ctx, memberCtx, memberCS, objs); err != nil {
			return err
		}
	}
	return r.report(memberCtx, objs, ep, proof, policy)
}

// revokeLegacy ends a migration once the hub holds the new token: the
// bindings name only the new identity, the old ServiceAccount is deleted
// (its tokens with it), and reviews prove it may do nothing the hub did.
func (r *registerOptions) revokeLegacy(ctx context.Context, memberCtx string, cs kubernetes.Interface, objs member.Objects) ([]string, error) {
	retry := fmt.Sprintf("the hub already uses the new identity; run register again to finish revoking serviceaccount %s/%s", r.workNamespace, member.LegacyServiceAccountName)
	deleted, err := member.Revoke(ctx, cs, objs)
	if err != nil {
		return nil, fmt.Errorf("member context %s: %w\n%s", memberCtx, err, retry)
	}
	if err := member.RevokedLegacy(ctx, cs, r.workNamespace); err != nil {
		return nil, fmt.Errorf("member context %s: %w\n%s", memberCtx, err, retry)
	}
	return deleted, nil
}

// revokeDrain deletes the drain binding of the work namespace when the
// set does not allow drains, with dryRun; Verify then proves the drains
// refused. It returns what it deleted.
func (r *registerOptions) revokeDrain(ctx context.Context, memberCtx string, cs kubernetes.Interface, objs member.Objects, dryRun []string) ([]string, error) {
	if objs.AllowsDrain() {
		return nil, nil
	}
	deleted, err := member.RevokeDrain(ctx, cs, r.workNamespace, dryRun)
	if err != nil {
		return nil, fmt.Errorf("member context %s: %w", memberCtx, err)
	}
	return deleted, nil
}

// drainRevokedNote says what revokeDrain deleted, and why.
func drainRevokedNote(memberCtx string, deleted []string, p hub.SetPolicy) string {
	return fmt.Sprintf("member context %s: deleted %s: cluster set %s does not allow drains (ClusterSet spec.allowDrain)", memberCtx, strings.Join(deleted, ", "), p.Set)
}

// setPolicy reads the Pod Security level of the registration's set from
// the hub, within hubTimeout. A dry run reads it too: the namespace it
// prints must carry the level the hub holds.
func (r *registerOptions) setPolicy(ctx context.Context) (hub.SetPolicy, error) {
	c, err := r.hubClient()
	if err != nil {
		return hub.SetPolicy{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	return hub.GetSetPolicy(ctx, c, r.set)
}

// checkHub checks the registration namespace, within hubTimeout.
func (r *registerOptions) checkHub(ctx context.Context, cs kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	return hub.CheckNamespace(ctx, cs, r.registrationNamespace)
}

// writeRegistration writes the registration Secret, within hubTimeout.
func (r *registerOptions) writeRegistration(ctx context.Context, cs kubernetes.Interface, reg hub.Registration) (created bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	return hub.Apply(ctx, cs, r.registrationNamespace, reg, member.FieldManager, r.dryRun.options())
}

// serverDryRun sends the member objects and the registration Secret, its
// token a placeholder, with dryRun=All, and says what the clusters
// accepted: no token is minted, so nothing is verified.
func (r *registerOptions) serverDryRun(ctx context.Context, memberCtx string, memberCS, hubCS kubernetes.Interface, objs member.Objects, ep member.Endpoint, p hub.SetPolicy) error {
	unchecked, err := member.ApplyServerDryRun(ctx, memberCS, objs)
	if err != nil {
		return fmt.Errorf("member context %s: %w", memberCtx, err)
	}
	revoked, err := r.revokeDrain(ctx, memberCtx, memberCS, objs, r.dryRun.options())
	if err != nil {
		return err
	}
	kc, err := member.BuildKubeconfig(r.name, r.workNamespace, ep, member.Secret(DryRunToken))
	if err != nil {
		return err
	}
	created, err := r.writeRegistration(ctx, hubCS, hub.Registration{Name: r.name, Labels: r.labels, Namespace: r.workNamespace, Kubeconfig: kc, PodSecurity: objs.EnforcedLevel()})
	if err != nil {
		return err
	}
	if r.output != "" {
		r.printPolicyNote(p)
		return r.printObjects(memberCtx, objs, ep, DryRunToken)
	}
	w, suffix := r.streams.Out, r.dryRun.suffix()
	var checked []string
	for _, n := range objs.Names() {
		if !slices.Contains(unchecked, n) {
			checked = append(checked, n)
		}
	}
	fmt.Fprintf(w, "member context %s: applied %s%s\n", memberCtx, strings.Join(checked, ", "), suffix)
	if len(unchecked) > 0 {
		fmt.Fprintf(w, "member context %s: not checked %s: their namespace does not exist yet, and a dry run creates none%s\n", memberCtx, strings.Join(unchecked, ", "), suffix)
	}
	if len(revoked) > 0 {
		fmt.Fprintln(w, drainRevokedNote(memberCtx, revoked, p)+suffix)
	}
	r.printPolicyNote(p)
	fmt.Fprintf(w, "member context %s: no token minted, no access verified: they need the objects applied%s\n", memberCtx, suffix)
	verb := "configured"
	if created {
		verb = "created"
	}
	fmt.Fprintf(w, "secret/%s %s in namespace %s on the hub%s\n", r.name, verb, r.registrationNamespace, suffix)
	return nil
}

// policyNote says what Pod Security level the member's work namespace
// enforces. warn tells that it is not what the user may expect: the set
// has no ClusterSet object, or the namespace is Kubernetes' own and keeps
// its labels. It ends by saying that drains are allowed, when they are:
// the hub's identity then reaches past the work namespace.
func (r *registerOptions) policyNote(p hub.SetPolicy) (note string, warn bool) {
	switch {
	case !member.EnforcesPodSecurity(r.workNamespace):
		note, warn = fmt.Sprintf("namespace %s is Kubernetes' own: register leaves its Pod Security labels alone; the hub still holds pod templates to level %s of cluster set %s", r.workNamespace, p.PodSecurity, p.Set), true
	case !p.Defined:
		note, warn = fmt.Sprintf("cluster set %s has no ClusterSet object: its clusters get the default Pod Security level %s", p.Set, p.PodSecurity), true
	default:
		note = fmt.Sprintf("cluster set %s: namespace %s of the member enforces its Pod Security level %s", p.Set, r.workNamespace, p.PodSecurity)
	}
	if p.AllowDrain {
		note += "; drains allowed: the hub may cordon nodes and evict pods in every namespace"
	}
	return note, warn
}

// printPolicyNote prints the note of p in a text report, and to stderr,
// when it warns, beside -o output.
func (r *registerOptions) printPolicyNote(p hub.SetPolicy) {
	note, warn := r.policyNote(p)
	switch {
	case r.output == "":
		fmt.Fprintln(r.streams.Out, note)
	case warn:
		fmt.Fprintln(r.streams.ErrOut, note)
	}
}

func (r *registerOptions) endpoint(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface) (member.Endpoint, error) {
	server, err := member.ServerURL(cfg, r.server)
	if err != nil {
		return member.Endpoint{}, err
	}
	ca, err := member.CAData(ctx, cfg, cs)
	if err != nil {
		return member.Endpoint{}, err
	}
	return member.Endpoint{Server: server, CAData: ca}, nil
}

// outcome is what a registration did, for its report.
type outcome struct {
	token    member.Token
	verified member.Verification
	workload member.WorkloadVerification
	created  bool
	// legacy tells that the member held the hub's identity in the work
	// namespace: register migrates it, and revoked is what it deleted.
	legacy  bool
	revoked []string
	// drainRevoked is the drain binding deleted, as the set does not
	// allow drains.
	drainRevoked []string
}

// prepareMember applies the member objects, mints the token, and proves
// what it may do. Nothing is written on the hub before this succeeded.
func (r *registerOptions) prepareMember(ctx context.Context, memberCtx string, memberCfg *rest.Config, cs kubernetes.Interface, objs member.Objects, ep member.Endpoint) (hub.Registration, outcome, error) {
	legacy, err := member.HasLegacy(ctx, cs, r.workNamespace)
	if err != nil {
		return hub.Registration{}, outcome{}, fmt.Errorf("member context %s: %w", memberCtx, err)
	}
	applied, skip := objs, ""
	if legacy {
		// The hub keeps working with its old token until its Secret holds
		// the new one; revokeLegacy takes the old one out after.
		applied, skip = objs.WithLegacySubject(), member.LegacyServiceAccountName
	}
	// Revoked before anything is applied: a register that fails after
	// leaves the hub no drain its set does not allow.
	drainRevoked, err := r.revokeDrain(ctx, memberCtx, cs, objs, r.dryRun.options())
	if err != nil {
		return hub.Registration{}, outcome{}, err
	}
	if err := member.Apply(ctx, cs, applied); err != nil {
		return hub.Registration{}, outcome{}, fmt.Errorf("member context %s: %w", memberCtx, err)
	}
	token, err := member.MintToken(ctx, cs, r.workNamespace, r.tokenDuration)
	if err != nil {
		return hub.Registration{}, outcome{}, fmt.Errorf("member context %s: %w", memberCtx, err)
	}
	kc, err := member.BuildKubeconfig(r.name, r.workNamespace, ep, token.Value)
	if err != nil {
		return hub.Registration{}, outcome{}, err
	}
	verified, err := r.verify(ctx, memberCfg, kc, objs.AllowsDrain())
	if err != nil {
		return hub.Registration{}, outcome{}, r.unverified(memberCtx, "the new credentials", err)
	}
	workload, err := member.VerifyWorkload(ctx, cs, r.workNamespace, skip)
	if err != nil {
		return hub.Registration{}, outcome{}, r.unverified(memberCtx, "the work namespace's serviceaccounts", err)
	}
	return hub.Registration{Name: r.name, Labels: r.labels, Namespace: r.workNamespace, Kubeconfig: kc, PodSecurity: objs.EnforcedLevel()},
		outcome{token: token, verified: verified, workload: workload, legacy: legacy, drainRevoked: drainRevoked}, nil
}

// unverified is the error of a check that failed before anything was
// written on the hub.
func (r *registerOptions) unverified(memberCtx, what string, err error) error {
	return fmt.Errorf("verifying %s in member context %s: %w\nNothing was written on the hub; remove the member objects with: kubectl fleetjob unregister %s --purge --member-context %s --work-namespace %s", what, memberCtx, err, r.name, memberCtx, r.workNamespace)
}

// verify makes the access reviews with the built kubeconfig, through the
// same parser as the hub. With --server, the hub's address may not be
// reachable from here (a kind-internal name): the reviews then go to the
// member context's address, with the new token and CA. drain tells
// whether the set allows drains.
func (r *registerOptions) verify(ctx context.Context, memberCfg *rest.Config, kc []byte, drain bool) (member.Verification, error) {
	cfg, err := kubeconfig.Parse(kc)
	if err != nil {
		return member.Verification{}, err
	}
	if r.server != "" {
		cfg.Host, cfg.ServerName = memberCfg.Host, memberCfg.ServerName
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return member.Verification{}, err
	}
	return member.Verify(ctx, cs, r.workNamespace, drain)
}

func (r *registerOptions) report(memberCtx string, objs member.Objects, ep member.Endpoint, o outcome, p hub.SetPolicy) error {
	if r.output != "" {
		r.printPolicyNote(p)
		return r.printObjects(memberCtx, objs, ep, redactedToken)
	}
	w := r.streams.Out
	fmt.Fprintf(w, "member context %s: applied %s\n", memberCtx, strings.Join(objs.Names(), ", "))
	if len(o.drainRevoked) > 0 {
		fmt.Fprintln(w, drainRevokedNote(memberCtx, o.drainRevoked, p))
	}
	r.printPolicyNote(p)
	fmt.Fprintf(w, "token of serviceaccount %s/%s expires %s (in %s): run register again before then to rotate it\n",
		member.HubNamespace, member.ServiceAccountName(r.workNamespace), o.token.Expires.UTC().Format(time.RFC3339), duration.HumanDuration(time.Until(o.token.Expires).Round(time.Minute)))
	fmt.Fprintf(w, "verified as %s: %d permissions granted, %d refused as they must be\n",
		member.ServiceAccountUser(r.workNamespace), o.verified.Granted, o.verified.Refused)
	fmt.Fprintf(w, "verified that serviceaccounts %s of namespace %s, which a ClusterJob's pods may run as, may do none of %d things fleetjob's objects rely on\n",
		strings.Join(o.workload.Accounts, ", "), r.workNamespace, o.workload.Refused)
	verb := "configured"
	if o.created {
		verb = "created"
	}
	fmt.Fprintf(w, "secret/%s %s in namespace %s on the hub\n", r.name, verb, r.registrationNamespace)
	if o.legacy {
		fmt.Fprintf(w, "migrated the hub's identity from serviceaccount %s/%s to %s/%s; deleted %s: its tokens no longer authenticate, and it may do nothing the hub did (verified)\n",
			r.workNamespace, member.LegacyServiceAccountName, member.HubNamespace, member.ServiceAccountName(r.workNamespace), strings.Join(o.revoked, ", "))
	}
	fmt.Fprintf(w, "cluster %q registered: the hub connects to %s\n", r.name, ep.Server)
	return nil
}

func (r *registerOptions) printDryRun(memberCtx string, objs member.Objects, ep member.Endpoint, p hub.SetPolicy) error {
	if r.output != "" {
		r.printPolicyNote(p)
		return r.printObjects(memberCtx, objs, ep, DryRunToken)
	}
	w := r.streams.Out
	fmt.Fprintf(w, "member context %s: would apply %s (dry run)\n", memberCtx, strings.Join(objs.Names(), ", "))
	if !objs.AllowsDrain() {
		fmt.Fprintf(w, "member context %s: would delete, where it exists, clusterrolebinding/%s: cluster set %s does not allow drains (dry run)\n", memberCtx, member.DrainClusterRoleBindingName(r.workNamespace), p.Set)
	}
	r.printPolicyNote(p)
	fmt.Fprintf(w, "member context %s: would mint a token of serviceaccount %s/%s valid for %s (dry run)\n", memberCtx, member.HubNamespace, member.ServiceAccountName(r.workNamespace), duration.HumanDuration(r.tokenDuration))
	fmt.Fprintf(w, "hub: would create or update secret/%s in namespace %s, connecting to %s (dry run)\n", r.name, r.registrationNamespace, ep.Server)
	return nil
}

// printObjects prints the member objects and the hub Secret, each preceded
// by a comment naming the cluster it belongs to; the token is placeholder.
func (r *registerOptions) printObjects(memberCtx string, objs member.Objects, ep member.Endpoint, placeholder string) error {
	kc, err := member.BuildKubeconfig(r.name, r.workNamespace, ep, member.Secret(placeholder))
	if err != nil {
		return err
	}
	secret := hub.DisplaySecret(r.registrationNamespace, hub.Registration{Name: r.name, Labels: r.labels, Namespace: r.workNamespace, Kubeconfig: kc,
		PodSecurity: objs.EnforcedLevel()})
	var items []placed
	for _, obj := range objs.List() {
		items = append(items, placed{where: "member cluster (context " + memberCtx + ")", obj: obj})
	}
	items = append(items, placed{where: "hub cluster", obj: secret})
	return writeObjects(r.streams.Out, r.output, items)
}

// placed is an object and the cluster it belongs to.
type placed struct {
	where string
	obj   any
}

// writeObjects prints objects as YAML documents, each under a comment that
// says where it belongs, or as a JSON List.
func writeObjects(w io.Writer, output string, items []placed) error {
	if output == "json" {
		objs := make([]any, len(items))
		for i, it := range items {
			objs[i] = it.obj
		}
		return printData(w, "json", map[string]any{"apiVersion": "v1", "kind": "List", "items": objs})
	}
	for i, it := range items {
		data, err := yaml.Marshal(it.obj)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		fmt.Fprintf(w, "# %s\n%s", it.where, data)
	}
	return nil
}
