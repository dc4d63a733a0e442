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

// kubectl-fleetjob is the fleetjob kubectl plugin: `kubectl fleetjob`. Its
// exit code tells a failed run (1) from a usage error (2), a hub it could
// not ask (3) and a timeout (4): see cli.ExitCode.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	// plan -f reads maintenance windows in their IANA time zones, as the
	// hub does, on machines without a zone database (Windows, slim images).
	_ "time/tzdata"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}
