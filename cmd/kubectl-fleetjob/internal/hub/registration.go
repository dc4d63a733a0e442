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

// Package hub reads and writes member registrations: the hub Secrets that
// hub/clusters turns into member connections.
package hub

import (
	"context"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/registration"
)

// DefaultNamespace is the hub namespace of registration Secrets, the hub's
// --registration-namespace default.
const DefaultNamespace = "fleetjob-system"

// Registration is one member as the hub knows it; Read leaves the
// registration label out of its labels.
type Registration = registration.Registration

// ValidateName checks a cluster name: it is a Secret name.
func ValidateName(name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("cluster name %q is not a valid Secret name: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// ParseLabels parses --label k=v values into labels, refusing what the
// API server or the hub would.
func ParseLabels(kvs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--label %q: want key=value", kv)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("--label %q: key: %s", kv, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("--label %q: value: %s", kv, strings.Join(errs, "; "))
		}
		if k == fleetv1.RegistrationLabel {
			return nil, fmt.Errorf("--label %q: %s is set by register itself", kv, k)
		}
		out[k] = v
	}
	return out, nil
}

// secret is the registration Secret without its data.
func secret(hubNamespace string, r Registration) *corev1ac.SecretApplyConfiguration {
	labels := maps.Clone(r.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[fleetv1.RegistrationLabel] = "true"
	annotations := map[string]string{fleetv1.NamespaceAnnotation: r.Namespace}
	if r.PodSecurity != "" {
		annotations[fleetv1.PodSecurityAnnotation] = r.PodSecurity
	}
	return corev1ac.Secret(r.Name, hubNamespace).
		WithLabels(labels).
		WithAnnotations(annotations).
		WithType(corev1.SecretTypeOpaque)
}

// Secret is the registration Secret of r to apply.
func Secret(hubNamespace string, r Registration) *corev1ac.SecretApplyConfiguration {
	return secret(hubNamespace, r).WithData(map[string][]byte{fleetv1.KubeconfigKey: r.Kubeconfig})
}

// DisplaySecret is the registration Secret of r with its kubeconfig as
// text, for people and GitOps; r.Kubeconfig must hold no real token.
func DisplaySecret(hubNamespace string, r Registration) *corev1ac.SecretApplyConfiguration {
	return secret(hubNamespace, r).WithStringData(map[string]string{fleetv1.KubeconfigKey: string(r.Kubeconfig)})
}

// Apply creates or updates the registration Secret with server-side apply.
// It refuses to take over a Secret of that name that is not a registration.
// created tells whether the Secret is new. dryRun [All] has the hub check
// the write and store nothing.
func Apply(ctx context.Context, cs kubernetes.Interface, hubNamespace string, r Registration, fieldManager string, dryRun []string) (created bool, err error) {
	existing, err := cs.CoreV1().Secrets(hubNamespace).Get(ctx, r.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		created = true
	case err != nil:
		return false, fmt.Errorf("reading secret %s/%s on the hub: %w", hubNamespace, r.Name, err)
	case existing.Labels[fleetv1.RegistrationLabel] != "true" && existing.Data[fleetv1.KubeconfigKey] == nil:
		return false, fmt.Errorf("secret %s/%s exists on the hub and is not a cluster registration: choose another cluster name, or delete that Secret", hubNamespace, r.Name)
	}
	_, err = cs.CoreV1().Secrets(hubNamespace).Apply(ctx, Secret(hubNamespace, r), metav1.ApplyOptions{FieldManager: fieldManager, Force: true, DryRun: dryRun})
	if err != nil {
		return false, fmt.Errorf("writing secret %s/%s on the hub: %w", hubNamespace, r.Name, err)
	}
	return created, nil
}

// CheckNamespace fails, naming the fix, when the hub has no registration
// namespace: that is an uninstalled hub, not something register should
// paper over.
func CheckNamespace(ctx context.Context, cs kubernetes.Interface, hubNamespace string) error {
	_, err := cs.CoreV1().Namespaces().Get(ctx, hubNamespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("namespace %s does not exist on the hub: install fleetjob on the hub first (or pass --registration-namespace)", hubNamespace)
	}
	if err != nil {
		return fmt.Errorf("reading namespace %s on the hub: %w", hubNamespace, err)
	}
	return nil
}

// Read turns a registration Secret into a Registration, with the hub's
// rules; its labels are those clusterSelector matches, without the
// registration label.
func Read(s *corev1.Secret) (Registration, error) {
	r, err := registration.Parse(s)
	delete(r.Labels, fleetv1.RegistrationLabel)
	return r, err
}
