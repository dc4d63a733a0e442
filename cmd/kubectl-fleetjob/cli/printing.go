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
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/output"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
)

// Formats of -o beside cli-runtime's: kubectl get's custom columns, and
// the plugin's own wide table.
const (
	customColumns     = "custom-columns"
	customColumnsFile = "custom-columns-file"
	wideFormat        = "wide"
)

// outputFlags are kubectl's printing flags: -o with cli-runtime's printers
// (json, yaml, name, go-template, jsonpath and their file forms) and
// custom-columns, and, for a command that draws a table, -o wide and
// --no-headers. No -o is the command's own output: its table, or a line
// that says what it did.
type outputFlags struct {
	print *genericclioptions.PrintFlags
	// table tells that the command draws a table: it takes --no-headers,
	// and -o wide when wide.
	table, wide bool
	noHeaders   bool
}

// newOutputFlags are the flags of a command that lists: a table, with a
// wide form when wide.
func newOutputFlags(wide bool) *outputFlags {
	return &outputFlags{print: genericclioptions.NewPrintFlags("").WithTypeSetter(scheme), table: true, wide: wide}
}

// newObjectOutputFlags are the flags of a command that writes an object:
// -o prints it as the hub answered (as it would be sent, with
// --dry-run=client); without -o the command says what it did.
func newObjectOutputFlags() *outputFlags {
	return &outputFlags{print: genericclioptions.NewPrintFlags("").WithTypeSetter(scheme)}
}

// addFlags adds -o and the printers' flags to cmd, and completes -o.
func (f *outputFlags) addFlags(cmd *cobra.Command) {
	f.print.AddFlags(cmd)
	flag := cmd.Flags().Lookup("output")
	flag.Usage = "Output format. One of: (" + strings.Join(f.formats(), ", ") + ")."
	if f.table {
		flag.Usage += " Without it, a table."
		cmd.Flags().BoolVar(&f.noHeaders, "no-headers", false, "With the table or custom-columns, print no header line")
	}
	_ = cmd.RegisterFlagCompletionFunc("output", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, f := range f.formats() {
			if strings.HasPrefix(f, toComplete) {
				out = append(out, f)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// formats are the values -o takes, as listed in --help; custom-columns
// and the file forms take =SPEC or =FILE.
func (f *outputFlags) formats() []string {
	out := slices.Clone(f.print.AllowedFormats())
	out = append(out, customColumns, customColumnsFile)
	if f.wide {
		out = append(out, wideFormat)
	}
	return out
}

func (f *outputFlags) format() string { return *f.print.OutputFormat }

// human tells that the command prints its own output: no -o, or -o wide.
func (f *outputFlags) human() bool {
	return f.format() == "" || (f.wide && f.format() == wideFormat)
}

// options are the table's drawing options for w.
func (f *outputFlags) options(w io.Writer) render.Options {
	return render.Options{Palette: colour(w), Wide: f.format() == wideFormat, NoHeaders: f.noHeaders}
}

// validate refuses an -o the command cannot print, before anything is
// asked of the hub.
func (f *outputFlags) validate() error {
	if f.human() {
		return nil
	}
	_, err := f.printer()
	return usage(err)
}

// printer is the printer of -o; nil for the command's own output.
func (f *outputFlags) printer() (printers.ResourcePrinter, error) {
	if f.human() {
		return nil, nil
	}
	name, spec, _ := strings.Cut(f.format(), "=")
	switch name {
	case customColumns:
		cols, err := output.ParseCustomColumns(spec)
		if err != nil {
			return nil, err
		}
		return &output.CustomColumns{Columns: cols, NoHeaders: f.noHeaders}, nil
	case customColumnsFile:
		file, err := os.Open(spec)
		if err != nil {
			return nil, fmt.Errorf("-o custom-columns-file: %w", err)
		}
		defer func() { _ = file.Close() }()
		cols, err := output.ReadCustomColumns(file)
		if err != nil {
			return nil, err
		}
		return &output.CustomColumns{Columns: cols, NoHeaders: f.noHeaders}, nil
	}
	p, err := f.print.ToPrinter()
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		return nil, fmt.Errorf("-o %s is not an output format here: use one of %s", f.format(), strings.Join(f.formats(), ", "))
	}
	return p, err
}

// printObject prints obj with the printer of -o.
func (f *outputFlags) printObject(obj runtime.Object, w io.Writer) error {
	p, err := f.printer()
	if err != nil {
		return usage(err)
	}
	return p.PrintObj(obj, w)
}

// printList prints items as a v1 List with the printer of -o.
func printList[T any](f *outputFlags, items []T, w io.Writer) error {
	list, err := output.List(items)
	if err != nil {
		return err
	}
	return f.printObject(list, w)
}
