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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/output"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
	"github.com/fleetjob/fleetjob/hub/disruption"
	"github.com/fleetjob/fleetjob/hub/fleet"
	hubmember "github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/pkg/access"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/pkg/podsecurity"
	"github.com/fleetjob/fleetjob/pkg/window"
	"github.com/fleetjob/fleetjob/spoke"
)

const (
	// maxPreviewReads is the most member clusters whose nodes plan -f
	// reads: a preview of a fleet is read from a laptop, one context per
	// cluster, and past a few dozen the answer is a summary anyway.
	maxPreviewReads = 50
	// previewReadConcurrency is how many members plan -f reads at once.
	previewReadConcurrency = 4
	// kindClusterPreview is the output-only kind plan -f prints for -o.
	kindClusterPreview = "ClusterPreview"
)

// previewOptions are plan -f's: the preview of a ClusterJob that does not
// exist yet, what the hub would do with it if it were created now.
type previewOptions struct {
	*options
	file             string
	memberContexts   []string
	memberKubeconfig string
	validate         bool
	tenancy          string
	// now is the clock windows are read at.
	now func() time.Time
	// memberReader reads a member's nodes: a client of cfg, or a fake one
	// in tests.
	memberReader func(cluster string, cfg *rest.Config) (client.Reader, error)
}

func newPreviewOptions(o *options) *previewOptions {
	return &previewOptions{options: o, validate: true, tenancy: "on", now: time.Now,
		memberReader: func(_ string, cfg *rest.Config) (client.Reader, error) {
			return client.New(cfg, client.Options{Scheme: scheme})
		}}
}

// previewFlags are the flags only plan -f takes.
var previewFlags = []string{"member-context", "member-kubeconfig", "validate", "tenancy"}

func (p *previewOptions) addFlags(cmd *cobra.Command) {
	flags := cmd.Flags()
	flags.StringVarP(&p.file, "filename", "f", "", "Preview the ClusterJob in this file (- for stdin) instead of showing a run's plans: nothing is created")
	flags.StringArrayVar(&p.memberContexts, "member-context", nil, "With -f, CLUSTER=CONTEXT: read the nodes of member CLUSTER with kubeconfig context CONTEXT, your own credentials (repeatable)")
	flags.StringVar(&p.memberKubeconfig, "member-kubeconfig", "", "With -f, the kubeconfig file holding the --member-context contexts (default: the hub's kubeconfig)")
	flags.BoolVar(&p.validate, "validate", true, "With -f, have the hub check the ClusterJob in a server dry run (CRD validation, admission policies) and preview it as the hub defaults it")
	flags.StringVar(&p.tenancy, "tenancy", "on", "With -f, the hub's --tenancy: on selects only clusters of the sets bound to the namespace and checks the sets' Pod Security; off selects from every cluster")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.RegisterFlagCompletionFunc("tenancy", cobra.FixedCompletions([]string{"on", "off"}, noFiles))
	_ = cmd.RegisterFlagCompletionFunc("member-context", p.completeMemberContext)
}

// completeMemberContext completes CLUSTER= with the registered clusters,
// then CONTEXT with the contexts of the member kubeconfig.
func (p *previewOptions) completeMemberContext(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cluster, _, hasContext := strings.Cut(toComplete, "=")
	if !hasContext {
		names, directive := completeRegistrations(p.options)(cmd, nil, toComplete)
		for i := range names {
			names[i] += "="
		}
		return names, directive | cobra.ShellCompDirectiveNoSpace
	}
	return completeWith(cmd, func(context.Context) ([]string, error) {
		loader := p.config.ToRawKubeConfigLoader()
		if p.memberKubeconfig != "" {
			loader = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: p.memberKubeconfig}, nil)
		}
		raw, err := loader.RawConfig()
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, len(raw.Contexts))
		for name := range raw.Contexts {
			out = append(out, cluster+"="+name)
		}
		return out, nil
	}, toComplete)
}

// memberTarget is where a member's nodes are read: a kubeconfig context.
type memberTarget struct {
	context string
	config  *rest.Config
}

// check refuses, before anything is asked of any cluster, what the
// command line gets wrong: the tenancy value, a --member-context not of
// the form CLUSTER=CONTEXT, a cluster named twice, a context the
// kubeconfig does not have.
func (p *previewOptions) check() (map[string]memberTarget, error) {
	if p.tenancy != "on" && p.tenancy != "off" {
		return nil, usagef("--tenancy must be on or off (the hub's --tenancy), not %q", p.tenancy)
	}
	targets := map[string]memberTarget{}
	for _, mc := range p.memberContexts {
		cluster, ctxName, ok := strings.Cut(mc, "=")
		if !ok || cluster == "" || ctxName == "" {
			return nil, usagef("--member-context %q: want CLUSTER=CONTEXT, the member cluster's name on the hub and a kubeconfig context of yours for it", mc)
		}
		if t, dup := targets[cluster]; dup {
			return nil, usagef("--member-context names cluster %s twice (contexts %s and %s)", cluster, t.context, ctxName)
		}
		m := memberFlags{context: ctxName, kubeconfig: p.memberKubeconfig}
		cfg, _, err := m.restConfig(p.options)
		if err != nil {
			return nil, fmt.Errorf("--member-context %s: %w", mc, err)
		}
		cfg.Timeout = memberReadTimeout
		targets[cluster] = memberTarget{context: ctxName, config: cfg}
	}
	return targets, nil
}

// previewCodecs decode a file strictly: a field the API does not know is
// an error, as kubectl create's default server-side validation makes it.
var previewCodecs = serializer.NewCodecFactory(scheme, serializer.EnableStrict)

// readClusterJob reads the one ClusterJob of -f (stdin for -), strictly:
// a field the API does not know is an error, naming its path.
func (p *previewOptions) readClusterJob() (*fleetv1.ClusterJob, error) {
	name := p.file
	var data []byte
	var err error
	if p.file == "-" {
		name = "stdin"
		data, err = io.ReadAll(p.streams.In)
	} else {
		data, err = os.ReadFile(p.file)
	}
	if err != nil {
		return nil, usagef("-f: %v", err)
	}
	docs, err := documents(data)
	if err != nil {
		return nil, usagef("-f %s: %v", name, err)
	}
	switch len(docs) {
	case 0:
		return nil, usagef("-f %s holds no object: want one ClusterJob (%s)", name, fleetv1.GroupVersion)
	case 1:
	default:
		return nil, usagef("-f %s holds %d objects: plan -f previews one ClusterJob; put each in its own file", name, len(docs))
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(docs[0], &tm); err != nil {
		return nil, usagef("-f %s: %v", name, err)
	}
	if tm.APIVersion != fleetv1.GroupVersion.String() || tm.Kind != "ClusterJob" {
		what := tm.Kind
		if what == "" {
			what = "an object without a kind"
		} else if tm.APIVersion != "" {
			what += " (" + tm.APIVersion + ")"
		}
		return nil, usagef("-f %s holds %s: want a ClusterJob (%s)", name, what, fleetv1.GroupVersion)
	}
	cj := &fleetv1.ClusterJob{}
	if _, _, err := previewCodecs.UniversalDeserializer().Decode(docs[0], nil, cj); err != nil {
		return nil, usagef("-f %s: %v", name, err)
	}
	if cj.Spec.RetryOf != nil {
		return nil, usagef("-f %s: spec.retryOf: a retry runs the frozen plans of clusterjob %s again, not new ones: see kubectl fleetjob plan %s", name, cj.Spec.RetryOf.Name, cj.Spec.RetryOf.Name)
	}
	return cj, nil
}

// documents splits YAML or JSON into its objects, as JSON, leaving out
// empty documents.
func documents(data []byte) ([]json.RawMessage, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs []json.RawMessage
	for {
		var doc json.RawMessage
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if trimmed := bytes.TrimSpace(doc); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
			docs = append(docs, doc)
		}
	}
}

// withNamespace sets cj's namespace: the file's, or -n's (the context's).
// A file and an explicit -n that disagree are refused, as kubectl does.
func (p *previewOptions) withNamespace(cj *fleetv1.ClusterJob) error {
	ns, err := p.namespace()
	if err != nil {
		return err
	}
	explicit := p.config.Namespace != nil && *p.config.Namespace != ""
	switch {
	case cj.Namespace == "":
		cj.Namespace = ns
	case explicit && cj.Namespace != ns:
		return usagef("the namespace of the file (%s) does not match -n %s", cj.Namespace, ns)
	}
	return nil
}

// dryRun sends cj to the hub as a server dry run of its create: the CRD's
// validation and the admission policies run, nothing is stored. It
// returns cj as the hub would store it, defaulted. A ClusterJob of that
// name that exists already is told on stderr, and the file is checked
// under a generated name.
func (p *previewOptions) dryRun(ctx context.Context, c client.Client, cj *fleetv1.ClusterJob) (*fleetv1.ClusterJob, error) {
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	obj := cj.DeepCopy()
	err := c.Create(ctx, obj, client.DryRunAll)
	if apierrors.IsAlreadyExists(err) && cj.Name != "" {
		fmt.Fprintf(p.streams.ErrOut, "Warning: clusterjob %s/%s exists already: creating this file would fail; previewing it as a new run.\n", cj.Namespace, cj.Name)
		obj = cj.DeepCopy()
		obj.Name, obj.GenerateName = "", cj.Name+"-"
		err = c.Create(ctx, obj, client.DryRunAll)
		obj.Name, obj.GenerateName = cj.Name, cj.GenerateName
	}
	switch {
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("the hub refused a server dry run of clusterjob %s/%s (--validate=false previews without it): %w", cj.Namespace, cj.Name, err)
	case err != nil:
		return nil, fmt.Errorf("the hub refuses clusterjob %s/%s (server dry run, nothing was created): %w", cj.Namespace, cj.Name, err)
	}
	return obj, nil
}

// previewHub is what plan -f reads from the hub: the clusters, the
// policies of their sets and, for a disruptive run, the disruption
// budgets.
type previewHub struct {
	members []fleetv1.MemberCluster
	// bound are the sets bound to the namespace, sorted; nil with
	// tenancy off.
	bound []string
	// sets are the ClusterSets by name; setsErr says why they could not
	// be read (a user who may not read clustersets).
	sets    map[string]fleetv1.ClusterSetSpec
	setsErr error
	// budgets are the FleetDisruptionBudgets, read only for a disruptive
	// run; budgetsErr says why they could not be read (a user who may not
	// read fleetdisruptionbudgets).
	budgets    []fleetv1.FleetDisruptionBudget
	budgetsErr error
}

// readHub reads the MemberClusters, the namespace's bindings with tenancy
// on, the ClusterSets and, for a disruptive run, the
// FleetDisruptionBudgets, within hubTimeout. No registration Secret is
// read: the MemberClusters carry the registrations' labels. The budgets
// of a run that is not disruptive are not read: they cannot hold it, and
// a hub without the FleetDisruptionBudget CRD still previews it.
func (p *previewOptions) readHub(ctx context.Context, c client.Reader, namespace string, disruptive bool) (previewHub, error) {
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	var h previewHub
	var err error
	if h.members, err = hub.ListMemberClusters(ctx, c, labels.Everything()); err != nil {
		return h, err
	}
	if p.tenancy == "on" {
		list := &fleetv1.ClusterSetBindingList{}
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return h, fmt.Errorf("listing the clustersetbindings of namespace %s on the hub (--tenancy=off if the hub runs without): %w", namespace, err)
		}
		h.bound = []string{}
		for _, b := range list.Items {
			if b.DeletionTimestamp.IsZero() {
				h.bound = append(h.bound, b.Spec.ClusterSet)
			}
		}
		slices.Sort(h.bound)
	}
	sets := &fleetv1.ClusterSetList{}
	switch err := c.List(ctx, sets); {
	case apierrors.IsForbidden(err):
		h.setsErr = fmt.Errorf("you may not list clustersets on the hub: %w", err)
	case err != nil:
		return h, fmt.Errorf("listing clustersets on the hub: %w", err)
	default:
		h.sets = map[string]fleetv1.ClusterSetSpec{}
		for _, s := range sets.Items {
			h.sets[s.Name] = s.Spec
		}
	}
	if !disruptive {
		return h, nil
	}
	budgets := &fleetv1.FleetDisruptionBudgetList{}
	switch err := c.List(ctx, budgets); {
	case apierrors.IsForbidden(err):
		h.budgetsErr = fmt.Errorf("you may not list fleetdisruptionbudgets on the hub: %w", err)
	case err != nil:
		return h, fmt.Errorf("listing fleetdisruptionbudgets on the hub: %w", err)
	default:
		// In name order, whatever order the list came in: the budgets
		// of a cluster, and the one an error names, are told the same
		// way every time.
		h.budgets = budgets.Items
		slices.SortFunc(h.budgets, func(a, b fleetv1.FleetDisruptionBudget) int { return strings.Compare(a.Name, b.Name) })
	}
	return h, nil
}

// budgetClusters are the registered clusters as a budget reads them (the
// hub's disruptionCaps): the MemberClusters' labels, which are the
// registrations', and their status.nodeCount, 0 when not known yet. A
// cluster being unregistered is left out, as selection leaves it out.
func (h *previewHub) budgetClusters() map[string]disruption.Cluster {
	clusters := make(map[string]disruption.Cluster, len(h.members))
	for i := range h.members {
		m := &h.members[i]
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		nodes := 0
		if m.Status.NodeCount != nil {
			nodes = int(*m.Status.NodeCount)
		}
		clusters[m.Name] = disruption.Cluster{Labels: m.Labels, Nodes: nodes}
	}
	return clusters
}

// budgetCaps sets, for a disruptive run, the caps of the budgets selecting
// c's cluster, resolved by the hub's own code (disruption.Caps) against
// the clusters' node counts now. A budget that cannot be read is c's
// BudgetError: the hub would hold the cluster's starts on it.
func budgetCaps(c *render.ClusterPreview, h *previewHub, clusters map[string]disruption.Cluster) {
	if h.budgetsErr != nil {
		c.BudgetsUnknown = true
		return
	}
	caps, err := disruption.Caps(h.budgets, c.Cluster, clusters)
	if err != nil {
		c.BudgetError = err.Error()
		return
	}
	for _, cp := range caps {
		c.Budgets = append(c.Budgets, render.BudgetCap{Budget: cp.Budget, PerCluster: cp.PerCluster, Total: cp.Total, Clusters: len(cp.Clusters)})
	}
}

// setPolicy is the policy of set as the hub reads it: its ClusterSet's
// spec, defaulted as the API server defaults it; a set without a
// ClusterSet has the defaults. nil when the sets could not be read.
func (h *previewHub) setPolicy(set string) *fleetv1.ClusterSetSpec {
	if h.setsErr != nil {
		return nil
	}
	spec := h.sets[set]
	if spec.PodSecurity == "" {
		spec.PodSecurity = fleetv1.DefaultPodSecurityLevel
	}
	return &spec
}

// previewed is a preview before the nodes are read, and the clusters whose
// nodes are to be read.
type previewed struct {
	render.Preview
	// labels and notReady are the selected clusters' labels, and the
	// reason and message of their Ready condition when it is not True.
	labels   map[string]map[string]string
	notReady map[string]string
	reads    []string
}

// preview decides, without reading any member, what the hub would do
// with cj now: the clusters it selects, the canary and the order they
// start in (the hub's own fleet.Decide), the Pod Security verdict of each
// cluster's set and its windows (pkg/podsecurity, pkg/window) and, for a
// run that drains, whether the set allows drains.
func (p *previewOptions) preview(cj *fleetv1.ClusterJob, h previewHub, targets map[string]memberTarget) (previewed, error) {
	now := p.now()
	pv := previewed{Preview: render.Preview{Namespace: cj.Namespace, Name: cj.Name, Tenancy: h.bound != nil, BoundSets: h.bound, MemberClusters: len(h.members)},
		labels: map[string]map[string]string{}, notReady: map[string]string{}}
	if pv.Name == "" {
		pv.Name = cj.GenerateName + "<generated>"
	}
	selected, err := p.selectClusters(cj, h, &pv)
	if err != nil {
		return pv, err
	}
	starts, notes := startOrder(cj, selected, pv.labels, now)
	pv.Notes = append(pv.Notes, notes...)
	if pv.Tenancy && len(h.bound) == 0 {
		pv.Notes = append(pv.Notes, fmt.Sprintf("Namespace %s has no ClusterSetBinding: with tenancy on, the run selects no cluster and fails (kubectl fleetjob bind SET -n %s).", cj.Namespace, cj.Namespace))
	}
	if h.setsErr != nil && len(selected) > 0 {
		what := "Pod Security levels and windows"
		if pv.Tenancy && cj.Spec.Drains() {
			what = "Pod Security levels, windows and whether they allow drains"
		}
		pv.Notes = append(pv.Notes, fmt.Sprintf("The sets' %s are unknown: %v.", what, h.setsErr))
	}
	pv.Disruptive = cj.Spec.DisruptsNodes()
	if cj.Spec.DisruptsNodes() && len(selected) > 0 {
		pv.Notes = append(pv.Notes, "spec.disruptive: nodes start only as the FleetDisruptionBudgets below have room, shared with every other disruptive run; what the others disrupt now only the hub knows.")
		if h.budgetsErr != nil {
			pv.Notes = append(pv.Notes, fmt.Sprintf("The FleetDisruptionBudgets are unknown: %v.", h.budgetsErr))
		}
	}
	if s := cj.Spec.Strategy; s.Type == fleetv1.StrategyBatch && s.Batch != nil && s.Batch.Order == fleetv1.BatchOrderRandom {
		pv.Notes = append(pv.Notes, "spec.strategy.batch.order random: the run draws its batches from its UID; it makes as many batches of the same sizes, of other nodes.")
	}
	var budgetClusters map[string]disruption.Cluster
	if cj.Spec.DisruptsNodes() {
		budgetClusters = h.budgetClusters()
	}
	skipped := 0
	for _, cluster := range selected {
		set := fleetv1.SetOf(pv.labels[cluster])
		policy := h.setPolicy(set)
		c := render.ClusterPreview{Cluster: cluster, ClusterSet: set, Start: starts[cluster].start, Canary: starts[cluster].canary,
			PodSecurity: podSecurityVerdict(pv.Tenancy, set, policy, h.setsErr, &cj.Spec.JobTemplate.Spec.Template),
			Window:      windowState(cj, set, policy, h.setsErr, now), NotReady: pv.notReady[cluster],
			Drain: drainVerdict(&cj.Spec, pv.Tenancy, cluster, set, policy)}
		if cj.Spec.DisruptsNodes() {
			budgetCaps(&c, &h, budgetClusters)
		}
		if c.Start == render.StartAwaitingSlot && cj.Spec.ClusterRollout != nil {
			c.MaxConcurrentClusters = cj.Spec.ClusterRollout.MaxConcurrentClusters
		}
		t, ok := targets[cluster]
		switch {
		case !ok:
			c.NotPlanned = fmt.Sprintf("pass --member-context %s=CONTEXT", cluster)
		case len(pv.reads) >= maxPreviewReads:
			c.NotPlanned = fmt.Sprintf("plan -f reads the nodes of %d clusters at most", maxPreviewReads)
			skipped++
		default:
			c.MemberContext = t.context
			pv.reads = append(pv.reads, cluster)
		}
		pv.Clusters = append(pv.Clusters, c)
	}
	if skipped > 0 {
		pv.Notes = append(pv.Notes, fmt.Sprintf("The nodes of %s with --member-context were not read: plan -f reads %d clusters' nodes at most.", previewCount(skipped, "more cluster"), maxPreviewReads))
	}
	return pv, nil
}

// selectClusters selects as the hub does (its selectClusters), from the
// MemberClusters, whose labels are the registrations': the clusters
// spec.clusterSelector matches, with tenancy on only in the sets bound to
// the namespace, sorted by name, the first fleetv1.MaxClusters.
func (p *previewOptions) selectClusters(cj *fleetv1.ClusterJob, h previewHub, pv *previewed) ([]string, error) {
	selector, err := metav1.LabelSelectorAsSelector(cj.Spec.ClusterSelector)
	if err != nil {
		return nil, fmt.Errorf("spec.clusterSelector: %w", err)
	}
	var names []string
	for i := range h.members {
		m := &h.members[i]
		if !m.DeletionTimestamp.IsZero() || !selector.Matches(labels.Set(m.Labels)) {
			continue
		}
		set := fleetv1.SetOf(m.Labels)
		if h.bound != nil && !slices.Contains(h.bound, set) {
			pv.Unbound = append(pv.Unbound, fmt.Sprintf("%s (%s)", m.Name, set))
			continue
		}
		names = append(names, m.Name)
		pv.labels[m.Name] = m.Labels
		if ready := meta.FindStatusCondition(m.Status.Conditions, fleetv1.MemberClusterReady); ready != nil && ready.Status != metav1.ConditionTrue {
			pv.notReady[m.Name] = ready.Reason + ": " + ready.Message
		}
	}
	slices.Sort(names)
	if len(names) > fleetv1.MaxClusters {
		pv.LeftOut = len(names) - fleetv1.MaxClusters
		names = names[:fleetv1.MaxClusters]
	}
	return names, nil
}

// clusterStart is when a cluster would start.
type clusterStart struct {
	start  string
	canary bool
}

// startOrder asks the hub's fleet decision (fleet.Decide) which of the
// selected clusters it would admit at once, as on a run's first
// reconcile; and, with spec.approval, which are the canary: those it
// would admit if no cluster limit or suspend held them. notes say what
// holds the others.
func startOrder(cj *fleetv1.ClusterJob, selected []string, clusterLabels map[string]map[string]string, now time.Time) (map[string]clusterStart, []string) {
	runs := make([]fleet.MemberRun, len(selected))
	for i, c := range selected {
		runs[i] = fleet.MemberRun{Cluster: c, Row: fleetv1.ClusterStatus{Name: c}, Labels: clusterLabels[c]}
	}
	decide := func(spec *fleetv1.ClusterJobSpec) fleet.Decision {
		return fleet.Decide(fleet.Input{Spec: spec, Runs: runs, Now: now, Created: now, Selected: selected})
	}
	d := decide(&cj.Spec)
	admitted := map[string]bool{}
	for _, c := range d.Admit {
		admitted[c] = true
	}
	a := cj.Spec.Approval
	gated := a != nil && a.Decision == nil
	canary := map[string]bool{}
	if gated {
		ungated := cj.Spec.DeepCopy()
		ungated.ClusterRollout, ungated.Suspend = nil, nil
		for _, c := range decide(ungated).Admit {
			canary[c] = true
		}
	}
	var notes []string
	out := make(map[string]clusterStart, len(selected))
	for _, c := range selected {
		s := clusterStart{canary: canary[c]}
		switch {
		case d.Halt != nil:
			s.start = render.StartStopped
		case admitted[c]:
			s.start = render.StartNow
		case cj.Spec.Suspend != nil && *cj.Spec.Suspend:
			s.start = render.StartSuspended
		case gated && !canary[c]:
			s.start = render.StartAwaitingApproval
		default:
			s.start = render.StartAwaitingSlot
		}
		out[c] = s
	}
	if d.Halt != nil {
		notes = append(notes, fmt.Sprintf("The run would stop at once, %s: %s.", d.Halt.Reason, d.Halt.Message))
	}
	if gated && len(selected) > 0 {
		notes = append(notes, approvalNote(cj, selected, canary))
	}
	return out, notes
}

// approvalNote says which clusters are the canary and what the others
// wait for.
func approvalNote(cj *fleetv1.ClusterJob, selected []string, canary map[string]bool) string {
	a := cj.Spec.Approval
	rule := ""
	if a.CanaryClusters != nil {
		rule = fmt.Sprintf("spec.approval.canaryClusters %d, the first in name order", *a.CanaryClusters)
	} else if sel, err := metav1.LabelSelectorAsSelector(a.CanarySelector); err == nil {
		rule = fmt.Sprintf("spec.approval.canarySelector %s, over the clusters' labels", sel)
	}
	var names []string
	for _, c := range selected {
		if canary[c] {
			names = append(names, c)
		}
	}
	timeout := fleetv1.DefaultApprovalTimeout
	if a.Timeout != nil && a.Timeout.Duration > 0 {
		timeout = a.Timeout.Duration
	}
	if len(names) == 0 {
		return fmt.Sprintf("Approval: no selected cluster is in the canary (%s): every cluster waits for kubectl fleetjob approve %s.", rule, cj.Name)
	}
	return fmt.Sprintf("Approval: the canary is %s (%s); the others (%d) wait for kubectl fleetjob approve %s, and without a decision within %s of the canary's end the run fails ApprovalTimeout.",
		strings.Join(names[:min(len(names), 5)], ", ")+moreText(len(names)-5), rule, len(selected)-len(names), cj.Name, timeout)
}

func moreText(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" and %d more", n)
}

// previewCount is n and word, plural unless n is 1.
func previewCount(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// podSecurityVerdict is what the hub's check of the pod template before
// a cluster's plan freezes (its checkTemplate) would say, with the same
// checks: pkg/podsecurity against the set's level, then the set's
// allowedServiceAccounts. Without tenancy only the hub's reserved
// ServiceAccount is refused.
func podSecurityVerdict(tenancy bool, set string, policy *fleetv1.ClusterSetSpec, policyErr error, tmpl *corev1.PodTemplateSpec) render.PodSecurityVerdict {
	if tenancy && policy == nil {
		return render.PodSecurityVerdict{Verdict: render.VerdictUnknown, Message: fmt.Sprintf("cluster set %s: %v", set, policyErr)}
	}
	v := render.PodSecurityVerdict{Verdict: render.VerdictAllowed}
	if !tenancy {
		set, policy, v.Verdict = "", nil, render.VerdictNotChecked
	} else {
		v.Level = string(policy.PodSecurity)
	}
	var refusal *podsecurity.Refusal
	if err := podsecurity.CheckTemplate(set, policy, tmpl, "no Job would be created"); errors.As(err, &refusal) {
		v.Verdict, v.Reason, v.Message = render.VerdictRefused, refusal.Reason, refusal.Err.Error()
	}
	return v
}

// drainVerdict is, for a run that drains, what the hub's check of the
// cluster's set before its plan freezes (its checkDrainAccess) would say:
// with tenancy, the set must allowDrain, or the hub fails the cluster
// DrainNotAllowed, with this message. Whether the hub's identity in the
// member may drain (the access review the hub asks there) needs the hub's
// credentials: the preview leaves it out. nil for a run that does not
// drain.
func drainVerdict(spec *fleetv1.ClusterJobSpec, tenancy bool, cluster, set string, policy *fleetv1.ClusterSetSpec) *render.DrainVerdict {
	switch {
	case !spec.Drains():
		return nil
	case !tenancy:
		return &render.DrainVerdict{Verdict: render.VerdictNotChecked}
	case policy == nil:
		return &render.DrainVerdict{Verdict: render.VerdictUnknown, Message: fmt.Sprintf("whether cluster set %s allows drains (spec.allowDrain) is unknown", set)}
	case !policy.AllowDrain:
		return &render.DrainVerdict{Verdict: render.VerdictRefused, Reason: fleetv1.ReasonDrainNotAllowed, Message: access.DrainNotAllowed(set, cluster)}
	}
	return &render.DrainVerdict{Verdict: render.VerdictAllowed}
}

// windowState is whether the windows of the run and of the cluster's set
// (pkg/window, as the hub reads them) let a group start at now, and when
// they next open within spec.maxWindowWait.
func windowState(cj *fleetv1.ClusterJob, set string, policy *fleetv1.ClusterSetSpec, policyErr error, now time.Time) render.WindowState {
	if policy == nil {
		if len(cj.Spec.MaintenanceWindows) == 0 {
			return render.WindowState{State: render.WindowUnknown, Message: fmt.Sprintf("the run names no window; those of cluster set %s are unknown", set)}
		}
		return render.WindowState{State: render.WindowUnknown, Message: fmt.Sprintf("the windows of cluster set %s are unknown", set)}
	}
	s, err := window.ForCluster(cj.Name, cj.Spec.MaintenanceWindows, set, policy.MaintenanceWindows)
	if err != nil {
		return render.WindowState{State: render.WindowInvalid, Message: fmt.Sprintf("%v: the hub would fail the cluster %s", err, fleetv1.ReasonNoMaintenanceWindow)}
	}
	if len(cj.Spec.MaintenanceWindows) == 0 && len(policy.MaintenanceWindows) == 0 {
		return render.WindowState{State: render.WindowAny}
	}
	if s.Open(now) {
		return render.WindowState{State: render.WindowOpen}
	}
	wait := hubmember.MaxWindowWait(&cj.Spec)
	if opens, found := s.NextOpen(now, now.Add(wait)); found {
		return render.WindowState{State: render.WindowWaiting, NextOpen: &metav1.Time{Time: opens.UTC()}}
	}
	return render.WindowState{State: render.WindowNone, Message: fmt.Sprintf(
		"no maintenance window of the run or of cluster set %s opens within %s (spec.maxWindowWait) of %s: the hub would fail the cluster %s",
		set, wait, now.UTC().Format(time.RFC3339), fleetv1.ReasonNoMaintenanceWindow)}
}

// readNodes reads the nodes of the clusters to read with the user's own
// credentials, at most previewReadConcurrency at once, each within
// memberReadTimeout, and plans each with the hub's planner. It returns
// one error naming every cluster it could not read and its flag.
func (p *previewOptions) readNodes(ctx context.Context, pv *previewed, cj *fleetv1.ClusterJob, targets map[string]memberTarget) error {
	index := map[string]int{}
	for i, c := range pv.Clusters {
		index[c.Cluster] = i
	}
	errs := make([]error, len(pv.reads))
	sem := make(chan struct{}, previewReadConcurrency)
	var wg sync.WaitGroup
	for i, cluster := range pv.reads {
		c := &pv.Clusters[index[cluster]]
		t := targets[cluster]
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			pl, err := p.planCluster(ctx, cj, cluster, t)
			if err != nil {
				c.NotPlanned = err.Error()
				errs[i] = fmt.Errorf("cluster %s (--member-context %s=%s): %w", cluster, cluster, t.context, err)
				return
			}
			c.Plan = &pl
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// planCluster lists the nodes of one member as the hub does before it
// freezes a plan (spoke.ListNodes), and plans them with the hub's planner
// (plan.Compute).
func (p *previewOptions) planCluster(ctx context.Context, cj *fleetv1.ClusterJob, cluster string, t memberTarget) (plan.Plan, error) {
	r, err := p.memberReader(cluster, t.config)
	if err != nil {
		return plan.Plan{}, fmt.Errorf("connecting with context %s: %w", t.context, err)
	}
	ctx, cancel := context.WithTimeout(ctx, memberReadTimeout)
	defer cancel()
	nodes, err := spoke.ListNodes(ctx, r)
	if err != nil {
		return plan.Plan{}, err
	}
	pl, err := plan.Compute(nodes, &cj.Spec, cj.UID, cluster)
	if err != nil {
		return plan.Plan{}, fmt.Errorf("planning: %w", err)
	}
	return pl, nil
}

// checkTargets refuses a --member-context for a cluster the hub does not
// know, and warns of one for a cluster not selected: its nodes are not
// read.
func (p *previewOptions) checkTargets(targets map[string]memberTarget, h previewHub, pv *previewed) error {
	known := map[string]bool{}
	for _, m := range h.members {
		known[m.Name] = true
	}
	selected := map[string]bool{}
	for _, c := range pv.Clusters {
		selected[c.Cluster] = true
	}
	for _, cluster := range slices.Sorted(maps.Keys(targets)) {
		switch {
		case !known[cluster]:
			return fmt.Errorf("--member-context %s=%s: no cluster %s is registered on the hub (see kubectl fleetjob clusters)", cluster, targets[cluster].context, cluster)
		case !selected[cluster]:
			fmt.Fprintf(p.streams.ErrOut, "Warning: --member-context %s=%s: cluster %s is not selected by this ClusterJob; its nodes are not read.\n", cluster, targets[cluster].context, cluster)
		}
	}
	return nil
}

// run previews the ClusterJob of -f: reads it, has the hub check it, reads
// the hub's clusters and sets and the members' nodes, and prints what the
// hub would do now. It returns an error naming the clusters whose nodes
// could not be read, after printing the others.
func (p *previewOptions) run(ctx context.Context, out *outputFlags) error {
	targets, err := p.check()
	if err != nil {
		return err
	}
	cj, err := p.readClusterJob()
	if err != nil {
		return err
	}
	if err := p.withNamespace(cj); err != nil {
		return err
	}
	c, err := p.hubClient()
	if err != nil {
		return err
	}
	validated := false
	if p.validate {
		if cj, err = p.dryRun(ctx, c, cj); err != nil {
			return err
		}
		validated = true
	}
	h, err := p.readHub(ctx, c, cj.Namespace, cj.Spec.DisruptsNodes())
	if err != nil {
		return err
	}
	pv, err := p.preview(cj, h, targets)
	if err != nil {
		return err
	}
	pv.Validated = validated
	if err := p.checkTargets(targets, h, &pv); err != nil {
		return err
	}
	readErr := p.readNodes(ctx, &pv, cj, targets)
	if out.human() {
		if _, err := fmt.Fprint(p.streams.Out, render.Previews(pv.Preview, out.options(p.streams.Out))); err != nil {
			return err
		}
		return readErr
	}
	for _, n := range pv.Notes {
		fmt.Fprintln(p.streams.ErrOut, n)
	}
	items := make([]clusterPreviewItem, len(pv.Clusters))
	for i, c := range pv.Clusters {
		items[i] = clusterPreviewItem{TypeMeta: metav1.TypeMeta{APIVersion: output.APIVersion, Kind: kindClusterPreview},
			Metadata: output.Meta{Name: c.Cluster, Labels: pv.labels[c.Cluster]}, ClusterPreview: c}
	}
	if err := printList(out, items, p.streams.Out); err != nil {
		return err
	}
	return readErr
}

// clusterPreviewItem is a ClusterPreview for -o: a kind of
// cli.fleetjob.io/v1alpha1 named for the cluster, labelled with its
// labels (the registration's).
type clusterPreviewItem struct {
	metav1.TypeMeta       `json:",inline"`
	Metadata              output.Meta `json:"metadata"`
	render.ClusterPreview `json:",inline"`
}
