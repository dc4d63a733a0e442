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

package podsecurity

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

func TestCheck(t *testing.T) {
	// pod is a template with one container "main", changed by edit.
	pod := func(edit func(*corev1.PodSpec)) *corev1.PodTemplateSpec {
		t := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}
		if edit != nil {
			edit(&t.Spec)
		}
		return t
	}
	restrictedOK := func(s *corev1.PodSpec) {
		s.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		s.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	}
	privileged := func(s *corev1.PodSpec) {
		s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	}
	hostPath := func(s *corev1.PodSpec) {
		s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	}
	hostPID := func(s *corev1.PodSpec) { s.HostPID = true }
	netAdmin := func(s *corev1.PodSpec) {
		s.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}
	}
	rootInRestricted := func(s *corev1.PodSpec) {
		restrictedOK(s)
		s.SecurityContext.RunAsNonRoot = ptr.To(false)
	}

	tests := []struct {
		name  string
		level fleetv1.PodSecurityLevel
		tmpl  *corev1.PodTemplateSpec
		// want are the names of the checks that fail, the text before
		// each detail.
		want []string
	}{
		{"a plain pod meets baseline", fleetv1.PodSecurityBaseline, pod(nil), nil},
		{"a plain pod fails restricted", fleetv1.PodSecurityRestricted, pod(nil),
			[]string{"allowPrivilegeEscalation != false", "unrestricted capabilities", "runAsNonRoot != true", "seccompProfile"}},
		{"a hardened pod meets restricted", fleetv1.PodSecurityRestricted, pod(restrictedOK), nil},
		{"privileged fails baseline", fleetv1.PodSecurityBaseline, pod(privileged), []string{"privileged"}},
		{"hostPath fails baseline", fleetv1.PodSecurityBaseline, pod(hostPath), []string{"hostPath volumes"}},
		{"hostPID fails baseline", fleetv1.PodSecurityBaseline, pod(hostPID), []string{"host namespaces"}},
		{"an added capability fails baseline", fleetv1.PodSecurityBaseline, pod(netAdmin), []string{"non-default capabilities"}},
		{"runAsNonRoot false fails restricted", fleetv1.PodSecurityRestricted, pod(rootInRestricted), []string{"runAsNonRoot != true"}},
		{"privileged allows everything", fleetv1.PodSecurityPrivileged, pod(func(s *corev1.PodSpec) { privileged(s); hostPath(s); hostPID(s) }), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failed, err := Check(tt.level, tt.tmpl)
			if err != nil {
				t.Fatalf("Check() error = %v", err)
			}
			var got []string
			for _, f := range failed {
				got = append(got, f.Check)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check() failed checks mismatch (-want +got):\n%s\nall: %q", diff, failed)
			}
		})
	}
}

func TestCheckNamesTheContainer(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "main", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}}}
	failed, err := Check(fleetv1.PodSecurityBaseline, tmpl)
	if err != nil || len(failed) != 1 || !strings.Contains(failed[0].Detail, `"main"`) {
		t.Errorf("Check() = %q, %v; want one failure naming container \"main\"", failed, err)
	}
}

func TestDescribe(t *testing.T) {
	got := Describe([]Failure{{Check: "privileged", Detail: `container "main" must not set securityContext.privileged=true`}, {Check: "host namespaces", Detail: "hostPID=true"}})
	want := `privileged, host namespaces: container "main" must not set securityContext.privileged=true; hostPID=true`
	if got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
}

func TestCheckUnknownLevel(t *testing.T) {
	if _, err := Check("open", &corev1.PodTemplateSpec{}); err == nil || !strings.Contains(err.Error(), `podSecurity "open"`) {
		t.Errorf("Check(open) error = %v, want one naming the level", err)
	}
}

func TestCheckServiceAccount(t *testing.T) {
	listing := func(names ...fleetv1.ServiceAccountName) *fleetv1.ClusterSetSpec {
		return &fleetv1.ClusterSetSpec{AllowedServiceAccounts: names}
	}
	for _, tc := range []struct {
		name       string
		policy     *fleetv1.ClusterSetSpec
		spec       corev1.PodSpec
		wantErr    string
		wantTokens []string
	}{
		{name: "default by default", policy: &fleetv1.ClusterSetSpec{}, wantTokens: []string{"default"}},
		{name: "a named account the set does not list", policy: &fleetv1.ClusterSetSpec{}, spec: corev1.PodSpec{ServiceAccountName: "builder"},
			wantErr:    `spec.jobTemplate.spec.template.spec.serviceAccountName: ServiceAccount "builder" is not in allowedServiceAccounts of cluster set team-a (default)`,
			wantTokens: []string{"default"}},
		{name: "listed", policy: listing("default", "builder"), spec: corev1.PodSpec{ServiceAccountName: "builder"}, wantTokens: []string{"default", "builder"}},
		{name: "default unset and not listed", policy: listing("builder"),
			wantErr:    `spec.jobTemplate.spec.template.spec.serviceAccountName (unset: default): ServiceAccount "default" is not in allowedServiceAccounts of cluster set team-a (builder)`,
			wantTokens: []string{"builder"}},
		{name: "the deprecated field", policy: &fleetv1.ClusterSetSpec{}, spec: corev1.PodSpec{DeprecatedServiceAccount: "builder"},
			wantErr: `spec.jobTemplate.spec.template.spec.serviceAccount: ServiceAccount "builder"`, wantTokens: []string{"default"}},
		{name: "serviceAccountName wins over the deprecated field", policy: &fleetv1.ClusterSetSpec{},
			spec: corev1.PodSpec{ServiceAccountName: "default", DeprecatedServiceAccount: "builder"}, wantTokens: []string{"default"}},
		{name: "the hub's name, listed by an old set", policy: listing("fleetjob-hub"), spec: corev1.PodSpec{ServiceAccountName: "fleetjob-hub"},
			wantErr: `spec.jobTemplate.spec.template.spec.serviceAccountName: ServiceAccount "fleetjob-hub" is the name of the hub's own identity`, wantTokens: []string{}},
		{name: "no tenancy: any account", spec: corev1.PodSpec{ServiceAccountName: "builder"}, wantTokens: []string{"builder"}},
		{name: "no tenancy: never the hub's", spec: corev1.PodSpec{ServiceAccountName: "fleetjob-hub"},
			wantErr: `serviceAccountName: ServiceAccount "fleetjob-hub" is the name of the hub's own identity`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckServiceAccount("team-a", tc.policy, &tc.spec)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if (tc.wantErr == "") != (got == "") || !strings.Contains(got, tc.wantErr) {
				t.Errorf("CheckServiceAccount() = %q, want an error containing %q", got, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantTokens, TokenAccounts(tc.policy, &tc.spec)); diff != "" {
				t.Errorf("TokenAccounts() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckTemplate: the refusal's reason tells a Pod Security violation
// from a ServiceAccount the set does not allow; without tenancy only the
// reserved account is refused; outcome ends what the hub or the preview
// says.
func TestCheckTemplate(t *testing.T) {
	tmpl := func(account string, privileged bool) *corev1.PodTemplateSpec {
		c := corev1.Container{Name: "main", Image: "busybox"}
		if privileged {
			c.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{ServiceAccountName: account, Containers: []corev1.Container{c}}}
	}
	baseline := &fleetv1.ClusterSetSpec{PodSecurity: fleetv1.PodSecurityBaseline}
	testCases := map[string]struct {
		policy      *fleetv1.ClusterSetSpec
		tmpl        *corev1.PodTemplateSpec
		wantReason  string
		wantMessage string
	}{
		"allowed": {policy: baseline, tmpl: tmpl("", false)},
		"privileged under baseline": {policy: baseline, tmpl: tmpl("", true), wantReason: fleetv1.ReasonPodSecurityViolation,
			wantMessage: `spec.jobTemplate.spec.template does not meet Pod Security level "baseline" of cluster set team-a, no Job was created: privileged: container "main" must not set securityContext.privileged=true`},
		"an account the set does not allow": {policy: baseline, tmpl: tmpl("builder", false), wantReason: fleetv1.ReasonServiceAccountNotAllowed,
			wantMessage: `spec.jobTemplate.spec.template.spec.serviceAccountName: ServiceAccount "builder" is not in allowedServiceAccounts of cluster set team-a (default); no Job was created`},
		"no tenancy: any account, privileged too": {tmpl: tmpl("builder", true)},
		"no tenancy: not the hub's": {tmpl: tmpl(fleetv1.ReservedServiceAccount, false), wantReason: fleetv1.ReasonServiceAccountNotAllowed,
			wantMessage: `spec.jobTemplate.spec.template.spec.serviceAccountName: ServiceAccount "fleetjob-hub" is the name of the hub's own identity in members registered before it moved out of the work namespace; no template may run as it; no Job was created`},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			err := CheckTemplate("team-a", tc.policy, tc.tmpl, "no Job was created")
			var got Refusal
			if r, ok := err.(*Refusal); ok {
				got = Refusal{Reason: r.Reason}
				if r.Error() != tc.wantMessage {
					t.Errorf("message = %q\nwant %q", r.Error(), tc.wantMessage)
				}
			} else if err != nil {
				t.Fatalf("CheckTemplate() = %v, not a *Refusal", err)
			}
			if diff := cmp.Diff(Refusal{Reason: tc.wantReason}, got); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
		})
	}
}
