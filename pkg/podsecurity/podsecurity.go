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
