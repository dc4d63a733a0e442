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

package spoke

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

const (
	// planKey names the plan document in its ConfigMap.
	planKey = "plan.json"
	// planComponent is the ComponentLabel value of a plan ConfigMap.
	planComponent = "plan"
	// planPartComponent is the ComponentLabel value of the ConfigMaps that
	// hold the rest of a plan too large for one (parts.go).
	planPartComponent = "plan-part"
)

// EnsurePlan returns the run's frozen plan. When there is none, it computes
// one from nodes and stores it in an immutable ConfigMap, so that a node
// joining or leaving later never changes a started run. c may be cached;
// live must read from the API server: it reads the plan another writer
// stored first. A missing work namespace is created when the registered
// identity may; otherwise the error is a *NamespaceMissingError.
func (m Member) EnsurePlan(ctx context.Context, nodes []corev1.Node) (plan.Plan, error) {
	return m.EnsurePlanFrom(ctx, func() (plan.Plan, error) {
		cj := m.Run.ClusterJob
		p, err := plan.Compute(nodes, &cj.Spec, cj.UID, m.Run.Cluster)
		if err != nil {
			return plan.Plan{}, &PermanentError{Reason: fleetv1.ReasonInvalidSpec, Err: fmt.Errorf("planning cluster %s: %w", m.Run.Cluster, err)}
		}
		return p, nil
	})
}

// EnsurePlanFrom is EnsurePlan with the plan computed by compute, which is
// called only when no plan is stored yet: a retry's plan comes from its
// parent's record rather than from the nodes.
func (m Member) EnsurePlanFrom(ctx context.Context, compute func() (plan.Plan, error)) (plan.Plan, error) {
	if p, found, err := ReadPlan(ctx, m.Client, m.Run); err != nil || found {
		return p, err
	}
	p, err := compute()
	if err != nil {
		return plan.Plan{}, err
	}
	cm, parts, err := planConfigMaps(m.Run, p)
	if err != nil {
		return plan.Plan{}, err
	}
	// The parts first: the plan ConfigMap, once it exists, says the plan
	// is frozen, and a reader finds every part it names.
	for _, part := range parts {
		if err = m.createPlanPart(ctx, part); err != nil {
			break
		}
	}
	if err == nil {
		err = m.createInNamespace(ctx, cm)
	}
	var missing *NamespaceMissingError
	switch {
	case err == nil:
		return p, nil
	case apierrors.IsAlreadyExists(err), errors.Is(err, errPlanStored):
		return readStoredPlan(ctx, m.Live, client.ObjectKeyFromObject(cm), m.Run)
	case errors.As(err, &missing):
		return plan.Plan{}, err // it says all, and the row has room for little
	default:
		return plan.Plan{}, fmt.Errorf("creating plan ConfigMap %s: %w", client.ObjectKeyFromObject(cm), err)
	}
}

// createInNamespace creates obj in the run's work namespace, creating the
// namespace when it is missing: a Create in a missing namespace is
// NotFound, and nothing else a Create does is.
func (m Member) createInNamespace(ctx context.Context, obj client.Object) error {
	err := m.Client.Create(ctx, obj)
	if apierrors.IsNotFound(err) {
		if err = m.ensureNamespace(ctx); err == nil {
			err = m.Client.Create(ctx, obj)
		}
	}
	return err
}

// errPlanStored says that the plan ConfigMap exists already: another
// writer froze the plan first.
var errPlanStored = errors.New("the plan is stored already")

// createPlanPart creates one part of a split plan. A part that exists with
// other bytes was left by an attempt that died before it stored the plan
// ConfigMap: it is replaced, unless the plan ConfigMap exists after all,
// in which case the stored plan wins (errPlanStored) and no part is
// touched.
func (m Member) createPlanPart(ctx context.Context, part *corev1.ConfigMap) error {
	err := m.createInNamespace(ctx, part)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	var existing corev1.ConfigMap
	if err := m.Live.Get(ctx, client.ObjectKeyFromObject(part), &existing); err != nil {
		return fmt.Errorf("reading plan part %s: %w", client.ObjectKeyFromObject(part), err)
	}
	if ownedBy(&existing, m.Run.ClusterJob.UID) && bytes.Equal(existing.BinaryData[planKey+compressedSuffix], part.BinaryData[planKey+compressedSuffix]) {
		return nil
	}
	var stored corev1.ConfigMap
	switch err := m.Live.Get(ctx, client.ObjectKey{Namespace: m.Run.Namespace, Name: naming.PlanName(m.Run.ClusterJob.UID)}, &stored); {
	case err == nil:
		return errPlanStored
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading the plan ConfigMap: %w", err)
	}
	if !ownedBy(&existing, m.Run.ClusterJob.UID) {
		return fmt.Errorf("ConfigMap %s exists but does not belong to ClusterJob %s", client.ObjectKeyFromObject(part), m.Run.ClusterJob.UID)
	}
	if err := m.Client.Delete(ctx, &existing, client.Preconditions{UID: &existing.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("replacing a stale plan part %s: %w", client.ObjectKeyFromObject(part), err)
	}
	return m.Client.Create(ctx, part)
}

// ensureNamespace creates the run's work namespace, so that registering a
// member by a plain Secret with an admin kubeconfig just works.
func (m Member) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: m.Run.Namespace,
		Labels: map[string]string{fleetv1.ManagedByLabel: fleetv1.ManagedByValue}}}
	err := m.Client.Create(ctx, ns)
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		return nil
	case apierrors.IsForbidden(err):
		return &NamespaceMissingError{Namespace: m.Run.Namespace, Cluster: m.Run.Cluster}
	}
	return fmt.Errorf("creating the work namespace %s: %w", m.Run.Namespace, err)
}

// readStoredPlan reads the plan another writer stored first (or that the
// cache had not seen yet); it wins over the one just computed.
func readStoredPlan(ctx context.Context, live client.Reader, key client.ObjectKey, run Run) (plan.Plan, error) {
	var stored corev1.ConfigMap
	if err := live.Get(ctx, key, &stored); err != nil {
		return plan.Plan{}, fmt.Errorf("reading the existing plan ConfigMap %s: %w", key, err)
	}
	return decodePlan(ctx, live, &stored, run, nil)
}

// planConfigMaps stores p for run: its ConfigMap, and the parts that hold
// the rest of the compressed document when it is larger than one ConfigMap
// holds. Each is immutable: nothing may change a plan once Jobs may have
// been started from it.
func planConfigMaps(run Run, p plan.Plan) (*corev1.ConfigMap, []*corev1.ConfigMap, error) {
	data, err := encodeDocument(planKey, p)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the plan: %w", err)
	}
	chunks, annotations, err := planLayout(run).split(data[planKey+compressedSuffix])
	if err != nil {
		return nil, nil, &PermanentError{Reason: fleetv1.ReasonPlanTooLarge, Err: fmt.Errorf("cluster %s: %w: select fewer nodes", run.Cluster, err)}
	}
	uid := run.ClusterJob.UID
	cm := newPlanConfigMap(run, naming.PlanName(uid), planComponent, chunks[0])
	if run.ClusterID != "" {
		cm.Annotations[fleetv1.ClusterIDAnnotation] = run.ClusterID
	}
	maps.Copy(cm.Annotations, annotations)
	parts := make([]*corev1.ConfigMap, 0, len(chunks)-1)
	for i, chunk := range chunks[1:] {
		parts = append(parts, newPlanConfigMap(run, naming.PlanPartName(uid, i+1), planPartComponent, chunk))
	}
	return cm, parts, nil
}

// newPlanConfigMap is an immutable ConfigMap of run holding chunk of its plan.
func newPlanConfigMap(run Run, name, component string, chunk []byte) *corev1.ConfigMap {
	labels := runLabels(run)
	labels[fleetv1.ComponentLabel] = component
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: run.Namespace, Labels: labels, Annotations: runAnnotations(run)},
		Immutable:  ptr.To(true),
		BinaryData: map[string][]byte{planKey + compressedSuffix: chunk},
	}
}

// namespaceError names the namespace when a Create failed because it does
// not exist: the API server answers a Create in a missing namespace with
// NotFound, and nothing else a Create does is NotFound.
func namespaceError(err error, namespace string) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("namespace %s does not exist in the member cluster: %w", namespace, err)
	}
	return err
}
