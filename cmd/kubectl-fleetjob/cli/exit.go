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
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// Exit codes: a script waiting on a run tells a failed run from a hub it
// could not ask, and either from a mistake in its own command line.
const (
	// ExitOK: the command did what it was asked; a run waited on completed.
	ExitOK = 0
	// ExitRunFailed: the run waited on (status -w, retry -w) ended Failed.
	ExitRunFailed = 1
	// ExitUsage: bad arguments or flags; nothing was asked of any cluster.
	ExitUsage = 2
	// ExitAPI: the hub or a member could not be reached, or refused or
	// failed a request (no kubeconfig, connection, TLS, authentication,
	// Forbidden, NotFound, a timeout, a server error).
	ExitAPI = 3
	// ExitTimeout: --timeout passed before the run waited on ended.
	ExitTimeout = 4
	// ExitError: the command ran and refused or failed otherwise: a check
	// that did not hold (register's access review, nothing to retry, a run
	// not started in a cluster).
	ExitError = 5
	// ExitInterrupted: stopped by Ctrl-C or SIGTERM, as a shell reports it.
	ExitInterrupted = 130
)

// exitCodesHelp documents the exit codes in --help.
const exitCodesHelp = `Exit codes:
  0    done; a run waited on (status -w, retry -w) completed
  1    the run waited on ended Failed
  2    usage: bad arguments or flags, nothing was asked of any cluster
  3    the hub or a member could not be reached, or refused or failed a request
  4    --timeout passed before the run waited on ended
  5    any other failure: a check that did not hold, nothing to do
  130  interrupted`

// usageError is a mistake in the command line, found before any cluster
// was asked anything.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usage marks err, when not nil, as a usage error.
func usage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err: err}
}

// usagef is a new usage error.
func usagef(format string, args ...any) error { return usage(fmt.Errorf(format, args...)) }

// RunFailedError is returned by status -w and retry -w when the run ended
// Failed.
type RunFailedError struct{ Namespace, Name, Message string }

func (e *RunFailedError) Error() string {
	msg := fmt.Sprintf("clusterjob %s/%s Failed", e.Namespace, e.Name)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// WaitTimeoutError is returned by status -w and retry -w when --timeout
// passed before the run ended.
type WaitTimeoutError struct {
	Namespace, Name string
	Timeout         time.Duration
	// Phase is the run's phase when the wait ended.
	Phase fleetv1.Phase
}

func (e *WaitTimeoutError) Error() string {
	phase := e.Phase
	if phase == "" {
		phase = fleetv1.PhasePending
	}
	return fmt.Sprintf("timed out after %s waiting for clusterjob %s/%s to end: it is %s", e.Timeout, e.Namespace, e.Name, phase)
}

// apiError marks an error of the hub's or a member's connection that
// carries no error of client-go's (a kubeconfig that cannot be used).
type apiError struct{ err error }

func (e *apiError) Error() string { return e.err.Error() }
func (e *apiError) Unwrap() error { return e.err }

// explained is an error of the API told in the plugin's words: its
// message replaces the API's, which it still wraps for ExitCode.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// explain is err, from the API, with message msg.
func explain(err error, format string, args ...any) error {
	return &explained{msg: fmt.Sprintf(format, args...), err: err}
}

// ExitCode is the exit code of a command that returned err.
func ExitCode(err error) int {
	var (
		usageErr   *usageError
		failed     *RunFailedError
		timeout    *WaitTimeoutError
		status     apierrors.APIStatus
		urlErr     *url.Error
		netErr     net.Error
		connection *apiError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &usageErr):
		return ExitUsage
	case errors.As(err, &failed):
		return ExitRunFailed
	case errors.As(err, &timeout):
		return ExitTimeout
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.As(err, &status), errors.As(err, &urlErr), errors.As(err, &netErr), errors.As(err, &connection),
		errors.Is(err, context.DeadlineExceeded), clientcmd.IsConfigurationInvalid(err), clientcmd.IsEmptyConfig(err):
		return ExitAPI
	}
	return ExitError
}

// Run runs kubectl fleetjob with args, prints the error if any, and
// returns the exit code. An error before the command ran (an unknown
// command or flag, a wrong number of arguments) is a usage error.
func Run(ctx context.Context, streams genericiooptions.IOStreams, args []string) int {
	cmd, o := newRoot(streams)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	if !o.started {
		err = usage(err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "error: ") {
		msg = "error: " + msg
	}
	fmt.Fprintln(streams.ErrOut, msg)
	return ExitCode(err)
}
