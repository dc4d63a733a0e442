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
	"context"
	"errors"
	"fmt"

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
	// maxPlanBytes leaves room under the 1 MiB ConfigMap limit for the
	// object's metadata. Compressed, 10,000 nodes with random 63-character
	// names take about half of it.
	maxPlanBytes = 900 << 10
)

// EnsurePlan returns the run's frozen plan. When there is none, it computes
// one from nodes and stores it in an immutable ConfigMap, so that a node
// joining or leaving later never changes a started run. c may be cached;
// live must read from the API server: it reads the plan another writer
// stored first. A missing work namespace is created when the registered
// identity may; otherwise the error is a *NamespaceMissingError.
func EnsurePlan(ctx context.Context, c client.Client, live client.Reader, run Run, nodes []corev1.Node) (plan.Plan, error) {
	cj := run.ClusterJob
	if p, found, err := ReadPlan(ctx, c, run); err != nil || found {
		return p, err
	}
	p, err := plan.Compute(nodes, &cj.Spec, cj.UID, run.Cluster)
	if err != nil {
		return plan.Plan{}, &PermanentError{Reason: fleetv1.ReasonInvalidSpec, Err: fmt.Errorf("planning cluster %s: %w", run.Cluster, err)}
	}
	cm, err := planConfigMap(run, p)
	if err != nil {
		return plan.Plan{}, err
	}
	err = c.Create(ctx, cm)
	if apierrors.IsNotFound(err) {
		// A Create in a missing namespace is NotFound, and nothing else a
		// Create does is.
		if err = ensureNamespace(ctx, c, run); err == nil {
			err = c.Create(ctx, cm)
		}
	}
	var missing *NamespaceMissingError
	switch {
	case err == nil:
		return p, nil
	case apierrors.IsAlreadyExists(err):
		return readStoredPlan(ctx, live, client.ObjectKeyFromObject(cm), run)
	case errors.As(err, &missing):
		return plan.Plan{}, err // it says all, and the row has room for little
	default:
		return plan.Plan{}, fmt.Errorf("creating plan ConfigMap %s: %w", client.ObjectKeyFromObject(cm), err)
	}
}

// ensureNamespace creates the run's work namespace, so that registering a
// member by a plain Secret with an admin kubeconfig just works.
func ensureNamespace(ctx context.Context, c client.Client, run Run) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: run.Namespace,
		Labels: map[string]string{fleetv1.ManagedByLabel: fleetv1.ManagedByValue}}}
	err := c.Create(ctx, ns)
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		return nil
	case apierrors.IsForbidden(err):
		return &NamespaceMissingError{Namespace: run.Namespace, Cluster: run.Cluster}
	}
	return fmt.Errorf("creating the work namespace %s: %w", run.Namespace, err)
}

// readStoredPlan reads the plan another writer stored first (or that the
// cache had not seen yet); it wins over the one just computed.
func readStoredPlan(ctx context.Context, live client.Reader, key client.ObjectKey, run Run) (plan.Plan, error) {
	var stored corev1.ConfigMap
	if err := live.Get(ctx, key, &stored); err != nil {
		return plan.Plan{}, fmt.Errorf("reading the existing plan ConfigMap %s: %w", key, err)
	}
	return decodePlan(&stored, run, nil)
}

// planConfigMap stores p for run. It is immutable: nothing may change a plan
// once Jobs may have been started from it.
func planConfigMap(run Run, p plan.Plan) (*corev1.ConfigMap, error) {
	data, err := encodeDocument(planKey, p)
	if err != nil {
		return nil, fmt.Errorf("encoding the plan: %w", err)
	}
	if size := documentSize(data); size > maxPlanBytes {
		return nil, &PermanentError{Reason: fleetv1.ReasonPlanTooLarge, Err: fmt.Errorf("the plan of cluster %s is %d bytes compressed, more than the %d a ConfigMap can hold: select fewer nodes", run.Cluster, size, maxPlanBytes)}
	}
	labels := runLabels(run)
	labels[fleetv1.ComponentLabel] = planComponent
	annotations := runAnnotations(run)
	if run.ClusterID != "" {
		annotations[fleetv1.ClusterIDAnnotation] = run.ClusterID
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:        naming.PlanName(run.ClusterJob.UID),
			Namespace:   run.Namespace,
			Labels:      labels,
			Annotations: annotations,
		},
		Immutable:  ptr.To(true),
		BinaryData: data,
	}, nil
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
