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

package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/access"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"

	"github.com/fleetjob/fleetjob/spoke"
)

// ClusterInfo is one registered cluster as seen from here, with the
// registered credentials.
type ClusterInfo struct {
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels,omitempty"`
	Namespace string            `json:"namespace"`
	Reachable bool              `json:"reachable"`
	Version   string            `json:"version,omitempty"`
	Nodes     *int              `json:"nodes,omitempty"`
	Reason    string            `json:"reason,omitempty"`
	Message   string            `json:"message,omitempty"`
}

const (
	// ProbeTimeout bounds the probe of one member: an unreachable member
	// costs this long, and no more, whatever its network does.
	ProbeTimeout = 5 * time.Second
	// probeWorkers members are probed at once, so a fleet of hundreds
	// finishes in a few timeouts without opening hundreds of connections.
	probeWorkers = 8
	// nodePageSize keeps each page of a node list small.
	nodePageSize = 500
)

// ProbeAll probes every registration, probeWorkers at a time, and returns
// the results in the order of secrets.
func ProbeAll(ctx context.Context, secrets []corev1.Secret) []ClusterInfo {
	out := make([]ClusterInfo, len(secrets))
	// Not ctx: every row gets its probe's answer, a cancelled one included.
	workqueue.ParallelizeUntil(context.Background(), probeWorkers, len(secrets), func(i int) {
		out[i] = Probe(ctx, &secrets[i])
	})
	return out
}

// Probe reads a registration Secret with the hub's rules and asks the member,
// with the registered credentials and within ProbeTimeout, its version,
// whether the credentials may do what the hub needs, and its node count.
// A kubeconfig the hub would refuse is never used: no plugin runs.
func Probe(ctx context.Context, s *corev1.Secret) ClusterInfo {
	r, err := Read(s)
	info := ClusterInfo{Name: s.Name, Labels: r.Labels, Namespace: r.Namespace}
	if err != nil {
		return info.failed(fleetv1.ClusterReasonInvalidRegistration, err)
	}
	cfg, err := RESTConfig(r)
	if err != nil {
		return info.failed(fleetv1.ClusterReasonInvalidRegistration, err)
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	cfg.Timeout = ProbeTimeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return info.failed(fleetv1.ClusterReasonInvalidRegistration, err)
	}
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return info.classify(err)
	}
	info.Reachable = true
	var v version.Info
	if json.Unmarshal(raw, &v) == nil {
		info.Version = v.GitVersion
	}
	_, denied, err := spoke.ReviewAccess(ctx, cs, access.Required(r.Namespace))
	if err != nil {
		return info.classify(err)
	}
	if len(denied) > 0 {
		return info.failed(fleetv1.ClusterReasonForbidden, fmt.Errorf("the registered credentials may not %s", access.DescribeAll(denied)))
	}
	n, err := countNodes(ctx, cfg)
	if err != nil {
		return info.classify(err)
	}
	info.Nodes = &n
	return info
}

func (i ClusterInfo) failed(reason string, err error) ClusterInfo {
	i.Reason, i.Message = reason, err.Error()
	return i
}

// classify names why a request failed: the member answered and refused, or
// it did not answer.
func (i ClusterInfo) classify(err error) ClusterInfo {
	var status apierrors.APIStatus
	switch {
	case apierrors.IsUnauthorized(err):
		i.Reachable = true
		return i.failed(fleetv1.ClusterReasonUnauthorized, fmt.Errorf("the member rejected the registered credentials (an expired token? re-run kubectl fleetjob register): %w", err))
	case apierrors.IsForbidden(err):
		i.Reachable = true
		return i.failed(fleetv1.ClusterReasonForbidden, err)
	case errors.As(err, &status):
		i.Reachable = true
		return i.failed("Error", err)
	}
	i.Reachable = false
	return i.failed(fleetv1.ClusterReasonUnreachable, err)
}

// countNodes counts the member's nodes, reading metadata only, in pages.
func countNodes(ctx context.Context, cfg *rest.Config) (int, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	nodes := mc.Resource(corev1.SchemeGroupVersion.WithResource("nodes"))
	n, opts := 0, metav1.ListOptions{Limit: nodePageSize}
	for {
		page, err := nodes.List(ctx, opts)
		if err != nil {
			return 0, err
		}
		n += len(page.Items)
		if page.Continue == "" {
			return n, nil
		}
		opts.Continue = page.Continue
	}
}
