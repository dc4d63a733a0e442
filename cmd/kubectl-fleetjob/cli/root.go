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

// Package cli is `kubectl fleetjob`: registering member clusters with a
// least-privilege identity, and following ClusterJob runs. The hub is the
// current kubeconfig context; --kubeconfig, --context and -n work as in
// kubectl.
package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
)

// options are shared by every subcommand: the hub connection and where
// registrations live.
type options struct {
	config                *genericclioptions.ConfigFlags
	streams               genericiooptions.IOStreams
	registrationNamespace string
	// hub, when set, is the hub client (a fake one in tests); otherwise one
	// is built from the kubeconfig flags.
	hub func() (client.WithWatch, error)
	// hubClientset, when set, is the hub clientset (a fake one in tests).
	clientset func() (kubernetes.Interface, error)
	// started tells that a command's own code ran: its arguments and flags
	// were parsed and counted. An error before is a usage error.
	started bool
}

// NewCommand returns the kubectl-fleetjob command, writing to streams.
// Run runs it and maps its error to an exit code.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd, _ := newRoot(streams)
	return cmd
}

func newRoot(streams genericiooptions.IOStreams) (*cobra.Command, *options) {
	o := &options{config: genericclioptions.NewConfigFlags(true), streams: streams}
	// --server belongs to register, where it is the member address the hub
	// uses, and --cluster to status and plan, where it names a member; the
	// hub is chosen with --kubeconfig and --context.
	o.config.APIServer, o.config.ClusterName = nil, nil
	cmd := &cobra.Command{
		Use:   "kubectl-fleetjob",
		Short: "Register member clusters and follow ClusterJob runs",
		Long: `kubectl fleetjob registers member clusters with the fleetjob hub, with an
identity that may do what the hub needs and nothing more, in cluster sets
that it binds to the namespaces whose ClusterJobs may use them, and follows
ClusterJob runs across the fleet. The hub is the current kubeconfig context.

Listing commands print a table, or with -o json|yaml a v1 List of objects
(rows that are no API object have kinds of cli.fleetjob.io/v1alpha1, made
for -o only), and -o name|jsonpath|go-template|custom-columns as kubectl
get does. Commands that write take --dry-run=none|client|server.

` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl fleetjob"},
		PersistentPreRunE: func(*cobra.Command, []string) error {
			o.started = true
			return nil
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	flags := cmd.PersistentFlags()
	o.config.AddFlags(flags)
	flags.StringVar(&o.registrationNamespace, "registration-namespace", hub.DefaultNamespace, "Hub namespace of the registration Secrets (the hub's --registration-namespace)")
	cmd.AddCommand(newRegister(o), newUnregister(o), newClusters(o), newStatus(o), newPlan(o), newLogs(o), newSuspend(o, true), newSuspend(o, false), newDecide(o, true), newDecide(o, false), newRetry(o),
		newClusterSets(o), newBind(o), newUnbind(o), newVersion(o))
	registerFlagCompletions(cmd, o)
	return cmd, o
}

// scheme knows the built-in kinds and ClusterJob.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := fleetv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

func (o *options) hubConfig() (*rest.Config, error) {
	cfg, err := o.config.ToRESTConfig()
	if err != nil {
		return nil, &apiError{fmt.Errorf("hub kubeconfig: %w", err)}
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	return cfg, nil
}

func (o *options) hubClientset() (kubernetes.Interface, error) {
	if o.clientset != nil {
		return o.clientset()
	}
	cfg, err := o.hubConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

func (o *options) hubClient() (client.WithWatch, error) {
	if o.hub != nil {
		return o.hub()
	}
	cfg, err := o.hubConfig()
	if err != nil {
		return nil, err
	}
	return client.NewWithWatch(cfg, client.Options{Scheme: scheme})
}

// namespace is the ClusterJob namespace: -n, or the context's.
func (o *options) namespace() (string, error) {
	ns, _, err := o.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", &apiError{fmt.Errorf("hub kubeconfig: %w", err)}
	}
	return ns, nil
}

// colour tells whether w takes colour: a terminal, without NO_COLOR.
func colour(w io.Writer) render.Palette {
	return render.Palette{Enabled: printers.AllowsColorOutput(w)}
}

// checkOutput accepts "" (the command's own output) or one of allowed
// for -o, in a command that prints no API objects.
func checkOutput(output string, allowed ...string) error {
	if output == "" || slices.Contains(allowed, output) {
		return nil
	}
	return usagef("-o %s is not supported here: use one of %s, or leave -o out", output, strings.Join(allowed, ", "))
}

// printData prints v as YAML or JSON.
func printData(w io.Writer, output string, v any) error {
	var data []byte
	var err error
	if output == "json" {
		data, err = json.MarshalIndent(v, "", "    ")
		data = append(data, '\n')
	} else {
		data, err = yaml.Marshal(v)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
