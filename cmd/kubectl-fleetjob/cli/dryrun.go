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
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// dryRun is what --dry-run asks: kubectl's strategies.
type dryRun int

const (
	// dryRunNone does what the command says.
	dryRunNone dryRun = iota
	// dryRunClient says what the command would do, and sends nothing that
	// changes anything: the hub and members may still be read.
	dryRunClient
	// dryRunServer sends every write with dryRun=All: the API servers run
	// authorization, admission (the hub's policies) and validation, and
	// persist nothing.
	dryRunServer
)

// dryRunValues are the values --dry-run takes.
var dryRunValues = []string{"none", "client", "server"}

// bareDryRun is the value of --dry-run without a value, as kubectl's.
const bareDryRun = "unchanged"

// addDryRunFlag adds --dry-run to cmd, into value, and completes it.
func addDryRunFlag(cmd *cobra.Command, value *string, client string) {
	cmd.Flags().StringVar(value, "dry-run", "none", `Must be "none", "server", or "client". If client strategy, `+client+
		`. If server strategy, send every write with dryRun=All: the API servers check it (authorization, admission policies, validation) and persist nothing.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = bareDryRun
	_ = cmd.RegisterFlagCompletionFunc("dry-run", cobra.FixedCompletions(dryRunValues, cobra.ShellCompDirectiveNoFileComp))
}

// parseDryRun reads --dry-run as kubectl does: none, client or server; a
// bare --dry-run and the booleans of old are accepted with a warning on
// warn.
func parseDryRun(value string, warn io.Writer) (dryRun, error) {
	switch value {
	case "", "none":
		return dryRunNone, nil
	case "client":
		return dryRunClient, nil
	case "server":
		return dryRunServer, nil
	case bareDryRun:
		fmt.Fprintln(warn, "warning: --dry-run is deprecated and can be replaced with --dry-run=client.")
		return dryRunClient, nil
	}
	b, err := strconv.ParseBool(value)
	if err != nil {
		return dryRunNone, usagef(`Invalid dry-run value (%v). Must be "none", "server", or "client".`, value)
	}
	if b {
		fmt.Fprintf(warn, "warning: --dry-run=%v is deprecated (boolean value) and can be replaced with --dry-run=client.\n", value)
		return dryRunClient, nil
	}
	fmt.Fprintf(warn, "warning: --dry-run=%v is deprecated (boolean value) and can be replaced with --dry-run=none.\n", value)
	return dryRunNone, nil
}

// options is what the API takes: dryRun=All for the server strategy.
func (d dryRun) options() []string {
	if d == dryRunServer {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// suffix ends a line that tells what was done, as kubectl's.
func (d dryRun) suffix() string {
	switch d {
	case dryRunClient:
		return " (dry run)"
	case dryRunServer:
		return " (server dry run)"
	}
	return ""
}
