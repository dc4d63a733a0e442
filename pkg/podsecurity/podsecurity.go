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

// Package podsecurity checks a ClusterJob's pod template against the Pod
// Security Standard level of a cluster set, with the checks the API
// server's own PodSecurity admission runs, so that a template a member
// would refuse fails on the hub first, before any Job exists, naming what
// failed.
package podsecurity

import (
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// EnforceLabel is the member namespace label that makes the member's
// PodSecurity admission enforce a level.
const EnforceLabel = psapi.EnforceLevelLabel

// evaluator is built once: the checks are static.
var evaluator = sync.OnceValues(func() (policy.Evaluator, error) {
	return policy.NewEvaluator(policy.DefaultChecks(), nil)
})

// Failure is one check of a level that a template fails.
type Failure struct {
	// Check is the check's short name, "privileged" or "hostPath volumes".
	Check string
	// Detail says what failed it, naming the containers or volumes.
	Detail string
}

// String is the check and its detail.
func (f Failure) String() string {
	if f.Detail == "" {
		return f.Check
	}
	return f.Check + " (" + f.Detail + ")"
}

// Check returns the checks of level that tmpl fails, none when it meets
// the level. It is evaluated at the latest version of the standard. An
// unknown level is an error: the API refuses it.
func Check(level fleetv1.PodSecurityLevel, tmpl *corev1.PodTemplateSpec) ([]Failure, error) {
	lvl, err := psapi.ParseLevel(string(level))
	if err != nil {
		return nil, fmt.Errorf("podSecurity %q: %w", level, err)
	}
	e, err := evaluator()
	if err != nil {
		return nil, fmt.Errorf("building the Pod Security checks: %w", err)
	}
	var failed []Failure
	for _, r := range e.EvaluatePod(psapi.LevelVersion{Level: lvl, Version: psapi.LatestVersion()}, &tmpl.ObjectMeta, &tmpl.Spec) {
		if !r.Allowed {
			failed = append(failed, Failure{Check: r.ForbiddenReason, Detail: r.ForbiddenDetail})
		}
	}
	return failed, nil
}

// Describe says what failed, the checks' names first: a message cut
// short still names them all.
func Describe(failed []Failure) string {
	checks, details := make([]string, len(failed)), make([]string, 0, len(failed))
	for i, f := range failed {
		checks[i] = f.Check
		if f.Detail != "" {
			details = append(details, f.Detail)
		}
	}
	out := strings.Join(checks, ", ")
	if len(details) > 0 {
		out += ": " + strings.Join(details, "; ")
	}
	return out
}

// ServiceAccount is the ServiceAccount a pod of spec runs as, the way the
// API server reads it: serviceAccountName, else the deprecated
// serviceAccount, else default. field is the one that named it, as a path
// under the pod spec, empty for the default.
func ServiceAccount(spec *corev1.PodSpec) (name, field string) {
	switch {
	case spec.ServiceAccountName != "":
		return spec.ServiceAccountName, "serviceAccountName"
	case spec.DeprecatedServiceAccount != "":
		return spec.DeprecatedServiceAccount, "serviceAccount"
	}
	return fleetv1.DefaultServiceAccount, ""
}

// CheckServiceAccount refuses a pod spec that runs as a ServiceAccount the
// policy of cluster set set does not allow, naming the field under
// spec.jobTemplate.spec.template.spec. A nil policy is a hub without
// tenancy: any account but the hub's reserved one.
func CheckServiceAccount(set string, policy *fleetv1.ClusterSetSpec, spec *corev1.PodSpec) error {
	name, field := ServiceAccount(spec)
	path := "spec.jobTemplate.spec.template.spec." + field
	if field == "" {
		path = "spec.jobTemplate.spec.template.spec.serviceAccountName (unset: " + fleetv1.DefaultServiceAccount + ")"
	}
	switch {
	case name == fleetv1.ReservedServiceAccount:
		return fmt.Errorf("%s: ServiceAccount %q is the name of the hub's own identity in members registered before it moved out of the work namespace; no template may run as it", path, name)
	case policy != nil && !policy.ServiceAccountAllowed(name):
		return fmt.Errorf("%s: ServiceAccount %q is not in allowedServiceAccounts of cluster set %s (%s)", path, name, set, strings.Join(TokenAccounts(policy, spec), ", "))
	}
	return nil
}

// TokenAccounts are the ServiceAccounts whose token the pods of spec may
// mount in a cluster whose set has policy (nil: a hub without tenancy,
// where the account spec names may, unless it is the reserved one).
func TokenAccounts(policy *fleetv1.ClusterSetSpec, spec *corev1.PodSpec) []string {
	if policy == nil {
		if name, _ := ServiceAccount(spec); name != fleetv1.ReservedServiceAccount {
			return []string{name}
		}
		return nil
	}
	if len(policy.AllowedServiceAccounts) == 0 {
		return []string{fleetv1.DefaultServiceAccount}
	}
	out := make([]string, 0, len(policy.AllowedServiceAccounts))
	for _, a := range policy.AllowedServiceAccounts {
		if string(a) != fleetv1.ReservedServiceAccount {
			out = append(out, string(a))
		}
	}
	return out
}

// Refusal is why a cluster set's policy refuses a pod template: Reason is
// ReasonPodSecurityViolation or ReasonServiceAccountNotAllowed.
type Refusal struct {
	Reason string
	Err    error
}

// Error implements error.
func (r *Refusal) Error() string { return r.Err.Error() }

// Unwrap returns the refusal's cause.
func (r *Refusal) Unwrap() error { return r.Err }

// CheckTemplate is the hub's check of a run's pod template against the
// policy of cluster set set before a cluster's plan freezes, and the
// preview's: nil when the set allows it, else a *Refusal saying why not (a
// level that cannot be checked refuses too). A nil policy is a hub without
// tenancy: only the hub's reserved ServiceAccount is refused. outcome says
// what the refusal means for the run ("no Job was created" for the hub,
// "no Job would be created" for a preview).
func CheckTemplate(set string, policy *fleetv1.ClusterSetSpec, tmpl *corev1.PodTemplateSpec, outcome string) error {
	account := func(err error) error {
		if err == nil {
			return nil
		}
		return &Refusal{Reason: fleetv1.ReasonServiceAccountNotAllowed, Err: fmt.Errorf("%w; %s", err, outcome)}
	}
	if policy == nil {
		return account(CheckServiceAccount("", nil, &tmpl.Spec))
	}
	failed, err := Check(policy.PodSecurity, tmpl)
	if err != nil {
		return &Refusal{Reason: fleetv1.ReasonPodSecurityViolation, Err: fmt.Errorf("ClusterSet %s: %w", set, err)}
	}
	if len(failed) > 0 {
		return &Refusal{Reason: fleetv1.ReasonPodSecurityViolation, Err: fmt.Errorf(
			"spec.jobTemplate.spec.template does not meet Pod Security level %q of cluster set %s, %s: %s", policy.PodSecurity, set, outcome, Describe(failed))}
	}
	return account(CheckServiceAccount(set, policy, &tmpl.Spec))
}
