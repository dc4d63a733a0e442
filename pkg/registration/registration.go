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

// Package registration reads a member registration: the hub Secret that
// names a member cluster, its work namespace and the kubeconfig the hub
// connects with. The hub (hub/clusters) and the plugin read registrations
// with these rules and no others, so that what `kubectl fleetjob clusters`
// accepts is what the hub connects to.
package registration

import (
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/kubeconfig"
)

// Registration is one member as the hub knows it.
type Registration struct {
	// Name is the cluster name: the Secret's name.
	Name string
	// Labels are the Secret's labels, which clusterSelector matches.
	Labels map[string]string
	// Namespace is the member work namespace.
	Namespace string
	// Kubeconfig is the stored kubeconfig.
	Kubeconfig []byte
	// PodSecurity is the Pod Security level register labelled the work
	// namespace with (fleetv1.PodSecurityAnnotation); "" when not recorded.
	PodSecurity string
}

// Parse reads a registration Secret, naming the field at fault. The
// kubeconfig is checked by RESTConfig.
func Parse(s *corev1.Secret) (Registration, error) {
	r := Registration{Name: s.Name, Labels: maps.Clone(s.Labels), Namespace: fleetv1.DefaultWorkNamespace, Kubeconfig: s.Data[fleetv1.KubeconfigKey],
		PodSecurity: s.Annotations[fleetv1.PodSecurityAnnotation]}
	if ns, ok := s.Annotations[fleetv1.NamespaceAnnotation]; ok {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return r, fmt.Errorf("annotation %s: %q is not a valid namespace name", fleetv1.NamespaceAnnotation, ns)
		}
		r.Namespace = ns
	}
	if len(r.Kubeconfig) == 0 {
		return r, fmt.Errorf("data.%s is missing or empty", fleetv1.KubeconfigKey)
	}
	return r, nil
}

// Limits bound a member client: client-go's default 5 requests per second
// would make a 1,000-node group take minutes.
type Limits struct {
	// QPS and Burst are the client's rate limit.
	QPS   float32
	Burst int
	// Timeout bounds each request; zero sets none. A client whose config
	// builds caches must have none: client-go applies it to watches too.
	Timeout time.Duration
}

// RESTConfig is r's member connection, through kubeconfig.Parse (no plugin
// runs, no file is read), with limits applied.
func (r Registration) RESTConfig(limits Limits) (*rest.Config, error) {
	cfg, err := kubeconfig.Parse(r.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("data.%s: %w", fleetv1.KubeconfigKey, err)
	}
	cfg.QPS, cfg.Burst, cfg.Timeout = limits.QPS, limits.Burst, limits.Timeout
	return cfg, nil
}
