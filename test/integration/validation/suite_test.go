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

// Package validation checks the ClusterJob CRD's OpenAPI and CEL validation
// against a real kube-apiserver: invalid objects are rejected naming the
// field, the spec is immutable except suspend, and a maximal status fits.
package validation

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var (
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	ctx       context.Context
	// ns is created once; every object of the suite lives in it.
	ns string
	// repoRoot is the module root, found from this package's directory.
	repoRoot = filepath.Join("..", "..", "..")
)

func TestValidation(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ClusterJob CRD validation")
}

var _ = BeforeSuite(func() {
	assets := requireAssets()
	ctx = context.Background()
	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(repoRoot, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	var err error
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred(), "starting envtest")

	scheme := runtime.NewScheme()
	Expect(fleetv1.AddToScheme(scheme)).To(Succeed())
	Expect(corev1.AddToScheme(scheme)).To(Succeed())
	Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())

	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "validation-"}}
	Expect(k8sClient.Create(ctx, namespace)).To(Succeed())
	ns = namespace.Name
})

var _ = AfterSuite(func() {
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})

// requireAssets returns KUBEBUILDER_ASSETS, failing the suite with the fix
// when it is unset or lacks a binary envtest starts.
func requireAssets() string {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		Fail("KUBEBUILDER_ASSETS is not set: run `make k8s-bins`, then " +
			"KUBEBUILDER_ASSETS=$PWD/bin/k8s/<version> go test ./test/integration/... (or `make test`)")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			Fail("KUBEBUILDER_ASSETS=" + dir + " has no " + bin + ": run `make k8s-bins` (" + err.Error() + ")")
		}
	}
	return dir
}
