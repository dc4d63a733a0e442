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
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
	"github.com/fleetjob/fleetjob/pkg/version"
)

const (
	// hubDeployment is the hub's Deployment, as config/manager names it.
	hubDeployment = "fleetjob-hub"
	// versionLabel is the label of the hub's Deployment that holds its
	// release, as the release manifests set it.
	versionLabel = "app.kubernetes.io/version"
)

// versions is what version prints, as kubectl version does.
type versions struct {
	ClientVersion version.Info `json:"clientVersion"`
	// HubVersion is absent with --client.
	HubVersion *hubVersion `json:"hubVersion,omitempty"`
}

// hubVersion is the hub's release, read from its Deployment.
type hubVersion struct {
	// Deployment is the Deployment read, as namespace/name.
	Deployment string `json:"deployment"`
	// Version is its label app.kubernetes.io/version; empty when unknown.
	Version string `json:"version,omitempty"`
	// Unknown says why the version is not known.
	Unknown string `json:"unknown,omitempty"`
}

func newVersion(o *options) *cobra.Command {
	var clientOnly bool
	var out, hubNamespace string
	cmd := &cobra.Command{
		Use:   "version [--client] [-o json|yaml]",
		Short: "Print the plugin's version and the hub's",
		Long: `Print the version of this plugin and of the hub: the label
app.kubernetes.io/version of the Deployment fleetjob-hub in --hub-namespace.
When the hub's cannot be read (the Deployment is missing, you may not get
it, the hub does not answer), say why and still succeed. --client prints
the plugin's only and asks the hub nothing.`,
		Example: `  kubectl fleetjob version
  kubectl fleetjob version --client
  kubectl fleetjob version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(out, "json", "yaml"); err != nil {
				return err
			}
			v := versions{ClientVersion: version.Get()}
			if !clientOnly {
				h := o.hubVersion(cmd.Context(), hubNamespace)
				v.HubVersion = &h
			}
			if out != "" {
				return printData(o.streams.Out, out, v)
			}
			_, err := fmt.Fprint(o.streams.Out, v.String())
			return err
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "Print the plugin's version only; ask the hub nothing")
	cmd.Flags().StringVarP(&out, "output", "o", "", "Output format: json or yaml")
	cmd.Flags().StringVar(&hubNamespace, "hub-namespace", hub.DefaultNamespace, "Hub namespace of the Deployment "+hubDeployment)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, noFiles))
	return cmd
}

// String is the text form: a line per component.
func (v versions) String() string {
	s := "Client Version: " + v.ClientVersion.String() + "\n"
	switch h := v.HubVersion; {
	case h == nil:
	case h.Version != "":
		s += "Hub Version: " + h.Version + "\n"
	default:
		s += "Hub Version: unknown: " + h.Unknown + "\n"
	}
	return s
}

// hubVersion reads the hub's version within hubTimeout. Whatever stops
// it is told in Unknown: version never fails for the hub.
func (o *options) hubVersion(ctx context.Context, ns string) hubVersion {
	h := hubVersion{Deployment: ns + "/" + hubDeployment}
	cs, err := o.hubClientset()
	if err != nil {
		h.Unknown = err.Error()
		return h
	}
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, hubDeployment, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		h.Unknown = fmt.Sprintf("no deployment %s on the hub: the hub runs in another namespace (--hub-namespace) or outside the cluster", h.Deployment)
	case apierrors.IsForbidden(err):
		h.Unknown = fmt.Sprintf("you may not get deployment %s on the hub: %v", h.Deployment, err)
	case err != nil:
		h.Unknown = fmt.Sprintf("reading deployment %s on the hub: %v", h.Deployment, err)
	case d.Labels[versionLabel] == "":
		h.Unknown = fmt.Sprintf("deployment %s has no label %s: it was not installed from a release", h.Deployment, versionLabel)
	default:
		h.Version = d.Labels[versionLabel]
	}
	return h
}
