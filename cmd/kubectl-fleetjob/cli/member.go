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

package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/member"
)

// register makes about 70 requests (applies, a token, access reviews of
// its identity and of the work namespace's ServiceAccounts):
// client-go's default 5 QPS would make it take seconds for no reason.
const (
	clientQPS   = 50
	clientBurst = 100
)

// memberFlags choose the member admin context. Its kubeconfig is used by the
// CLI only, never stored, so it may use any credential kubectl supports.
type memberFlags struct {
	context    string
	kubeconfig string
}

func (m *memberFlags) addFlags(flags *pflag.FlagSet) {
	flags.StringVar(&m.context, "member-context", "", "Kubeconfig context of the member cluster, with rights to create namespaces and RBAC (default: the current context of --member-kubeconfig)")
	flags.StringVar(&m.kubeconfig, "member-kubeconfig", "", "Kubeconfig file holding --member-context (default: the hub's kubeconfig)")
}

func (m *memberFlags) set() bool { return m.context != "" || m.kubeconfig != "" }

// restConfig is the member admin connection and the context's name. Without
// --member-kubeconfig, the member context is looked up where the hub's is.
func (m *memberFlags) restConfig(o *options) (*rest.Config, string, error) {
	if !m.set() {
		return nil, "", usage(errors.New("--member-context is required: the kubeconfig context of the member cluster (see kubectl config get-contexts)"))
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	switch {
	case m.kubeconfig != "":
		rules.ExplicitPath = m.kubeconfig
	case o.config.KubeConfig != nil && *o.config.KubeConfig != "":
		rules.ExplicitPath = *o.config.KubeConfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: m.context})
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, "", &apiError{fmt.Errorf("member kubeconfig: %w", err)}
	}
	name := m.context
	if name == "" {
		name = raw.CurrentContext
	}
	if _, ok := raw.Contexts[name]; !ok || name == "" {
		return nil, "", usagef("member context %q is not in the kubeconfig (see kubectl config get-contexts)", name)
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", &apiError{fmt.Errorf("member context %q: %w", name, err)}
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	return cfg, name, nil
}

func validateWorkNamespace(ns string) error {
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("--work-namespace %q is not a valid namespace name", ns)
	}
	if ns == member.HubNamespace {
		return fmt.Errorf("--work-namespace %s holds the hub's identities, where no Job may run: choose another namespace", ns)
	}
	return nil
}

func addWorkNamespaceFlag(flags *pflag.FlagSet, ns *string, usage string) {
	flags.StringVar(ns, "work-namespace", fleetv1.DefaultWorkNamespace, usage)
}
