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

// Command pause is the sandbox process of every pod on the offline kind nodes
// (the image registry.k8s.io/pause that hack/kind/image.sh makes): it holds
// the pod's namespaces open until containerd stops the sandbox. The upstream
// pause is a C program from the Kubernetes tree; this one builds from the Go
// toolchain alone, static, so it runs FROM scratch.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Buffered: signal.Notify drops signals a full channel cannot take, and a
	// dropped SIGCHLD would leave a zombie until the next one arrives.
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			// containerd stops a sandbox with SIGTERM (SIGKILL after its
			// timeout); exiting at once is what the upstream pause does.
			os.Exit(0)
		}
		reapChildren()
	}
}

// reapChildren waits for every exited child. As PID 1 of a pod that shares its
// process namespace, pause inherits orphans of the other containers; without
// this they would stay zombies for the pod's lifetime.
func reapChildren() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
