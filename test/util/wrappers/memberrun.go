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

package wrappers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// MemberRunWrapper wraps a MemberRun under construction.
type MemberRunWrapper struct{ fleetv1.MemberRun }

// MakeMemberRun returns a valid, not yet admitted MemberRun of ClusterJob
// clusterJob (UID uid) in cluster, named and labelled as the hub names it.
func MakeMemberRun(namespace, clusterJob, uid, cluster string) *MemberRunWrapper {
	return &MemberRunWrapper{fleetv1.MemberRun{
		ObjectMeta: metav1.ObjectMeta{
			Name: naming.MemberRunName(clusterJob, cluster), Namespace: namespace,
			Labels: map[string]string{
				fleetv1.ClusterJobLabel:    naming.LabelValue(clusterJob),
				fleetv1.ClusterJobUIDLabel: naming.LabelValue(uid),
				fleetv1.ClusterLabel:       naming.LabelValue(cluster),
			},
		},
		Spec: fleetv1.MemberRunSpec{ClusterJob: clusterJob, ClusterJobUID: uid, Cluster: cluster},
	}}
}

// Admitted sets spec.admitted.
func (w *MemberRunWrapper) Admitted() *MemberRunWrapper {
	w.Spec.Admitted = true
	return w
}

// Halt sets spec.halt.
func (w *MemberRunWrapper) Halt(reason, message string) *MemberRunWrapper {
	w.Spec.Halt = &fleetv1.Halt{Reason: reason, Message: message}
	return w
}

// AcceptedFailures sets spec.acceptedFailures.
func (w *MemberRunWrapper) AcceptedFailures(n int32) *MemberRunWrapper {
	w.Spec.AcceptedFailures = n
	return w
}

// Status sets the status.
func (w *MemberRunWrapper) Status(s fleetv1.MemberRunStatus) *MemberRunWrapper {
	w.MemberRun.Status = s
	return w
}

// Obj returns the MemberRun.
func (w *MemberRunWrapper) Obj() *fleetv1.MemberRun { return &w.MemberRun }
