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

// Package install installs fleetjob as a release ships it, against a real
// kube-apiserver with the kubectl of the same Kubernetes version:
// install.yaml rendered from config/ as `make release` renders it, and the
// Helm chart charts/fleetjob, which must be install.yaml for its defaults.
package install

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

var (
	testEnv *envtest.Environment
	cfg     *rest.Config
	ctx     context.Context
	// kubectl is the kubectl of KUBEBUILDER_ASSETS, kustomize the one
	// `make kustomize` installs.
	kubectl, kustomize string
	// kubeconfig is a system:masters kubeconfig of the API server.
	kubeconfig string
	// repoRoot is the module root, found from this package's directory.
	repoRoot = filepath.Join("..", "..", "..")
)

func TestInstall(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "install.yaml and the Helm chart")
}

var _ = BeforeSuite(func() {
	assets := requireTools()
	ctx = context.Background()
	testEnv = &envtest.Environment{BinaryAssetsDirectory: assets}
	var err error
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred(), "starting envtest")
	admin, err := testEnv.AddUser(envtest.User{Name: "installer", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	data, err := admin.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(os.WriteFile(kubeconfig, data, 0o600)).To(Succeed())
})

var _ = AfterSuite(func() {
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})

// requireTools returns KUBEBUILDER_ASSETS, failing the suite with the fix
// when a binary the suite runs is missing.
func requireTools() string {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		Fail("KUBEBUILDER_ASSETS is not set: run `make envtest-bins`, then " +
			"KUBEBUILDER_ASSETS=$PWD/bin/k8s/<version> go test ./test/integration/install/ (or `make test-envtest`)")
	}
	for _, bin := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			Fail("KUBEBUILDER_ASSETS=" + dir + " has no " + bin + ": run `make envtest-bins` (" + err.Error() + ")")
		}
	}
	kubectl = filepath.Join(dir, "kubectl")
	var err error
	kustomize, err = filepath.Abs(filepath.Join(repoRoot, "bin", "kustomize"))
	Expect(err).NotTo(HaveOccurred())
	if _, err := os.Stat(kustomize); err != nil {
		Fail("no kustomize at " + kustomize + ": run `make kustomize` (`make test-envtest` does)")
	}
	return dir
}

// run runs a command of the repository (from its root) and returns its
// standard output, failing with its standard error.
func run(env []string, name string, args ...string) []byte {
	GinkgoHelper()
	// Rendering and applying the 800 KB install.yaml takes seconds on a
	// loaded 2-core machine; a minute means something hangs.
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, name, args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	Expect(cmd.Run()).To(Succeed(), "%s %s:\n%s", name, strings.Join(args, " "), stderr.String())
	return stdout.Bytes()
}

// kubectlRun runs the suite's kubectl on the envtest API server.
func kubectlRun(args ...string) string {
	GinkgoHelper()
	return string(run(nil, kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...))
}

// kubectlFails runs the suite's kubectl, which must fail, and returns
// what it said.
func kubectlFails(args ...string) string {
	GinkgoHelper()
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(cctx, kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	Expect(err).To(HaveOccurred(), "kubectl %s succeeded:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// manifests renders install.yaml as `make release` does, with hub image
// img and version label version, into a file; with an overlay, that
// kustomization of config/ (install-sharded.yaml: "sharded").
func manifests(img, version string, overlay ...string) string {
	GinkgoHelper()
	out := run([]string{"KUSTOMIZE=" + kustomize}, filepath.Join("hack", "release", "manifests.sh"), append([]string{img, version}, overlay...)...)
	path := filepath.Join(GinkgoT().TempDir(), "install.yaml")
	Expect(os.WriteFile(path, out, 0o644)).To(Succeed())
	return path
}
