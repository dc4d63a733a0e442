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
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// PermanentError is a failure that waiting cannot heal: the same call with
// the same input fails again. The hub fails the cluster at once rather than
// retrying it until its error timeout.
type PermanentError struct {
	// Reason is a CamelCase word for the cluster's row.
	Reason string
	// Err is the failure.
	Err error
}

// Error implements error.
func (e *PermanentError) Error() string { return e.Err.Error() }

// Unwrap returns the failure.
func (e *PermanentError) Unwrap() error { return e.Err }

// NamespaceMissingError reports a work namespace that does not exist in the
// member and that the registered identity may not create.
type NamespaceMissingError struct {
	// Namespace is the work namespace.
	Namespace string
	// Cluster is the member cluster's name.
	Cluster string
}

// Error implements error, with the commands that fix it.
func (e *NamespaceMissingError) Error() string {
	return fmt.Sprintf("namespace %s is missing in cluster %s and the registered identity may not create it: "+
		"run `kubectl fleetjob register %s` again or `kubectl create namespace %s` in the member",
		e.Namespace, e.Cluster, e.Cluster, e.Namespace)
}

// ErrorReason classifies err, an error of work in a member, into a reason
// for the cluster's row, and tells whether it is permanent.
func ErrorReason(err error) (reason string, permanent bool) {
	var perm *PermanentError
	var ns *NamespaceMissingError
	switch {
	case errors.As(err, &perm):
		return perm.Reason, true
	case errors.As(err, &ns):
		return fleetv1.ReasonWorkNamespaceMissing, false
	case apierrors.IsForbidden(err):
		return fleetv1.ClusterReasonForbidden, false
	}
	return fleetv1.ReasonMemberError, false
}
