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

// Package cli tests `kubectl fleetjob` in-process against two real API
// servers, a hub and a member: register proves least privilege with
// SubjectAccessReviews, and the read commands find what spoke wrote.
package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/cli"
)

const registrationNamespace = "fleetjob-system"

var (
	scheme    = runtime.NewScheme()
	hubEnv    *envtest.Environment
	memberEnv *envtest.Environment
	hubC      client.Client
	memberC   client.Client
	ctx       context.Context
	cancel    context.CancelFunc
	// kubeconfig holds two contexts, "hub" (current) and "member", both
	// system:masters, as a user's own kubeconfig would.
	kubeconfigFile string
	// memberKubeconfig holds only the member, as context "member-admin".
	memberKubeconfig string
)

func TestCLI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "kubectl fleetjob integration suite")
}

var _ = BeforeSuite(func() {
	// TokenRequest, RBAC propagation and watches take seconds on a loaded
	// 2-core CI machine; no spec waits on anything slower.
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); assets == "" || err != nil {
		Fail("KUBEBUILDER_ASSETS must point at kube-apiserver and etcd: run `make k8s-bins` and use `make test`")
	}
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(fleetv1.AddToScheme(scheme)).To(Succeed())
	ctx, cancel = context.WithCancel(context.Background())

	// envtest's API servers sign ServiceAccount tokens (it passes
	// --service-account-issuer and signing keys), so TokenRequest works.
	hubEnv = &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	memberEnv = &envtest.Environment{}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, env := range []*envtest.Environment{hubEnv, memberEnv} {
		wg.Go(func() { _, errs[i] = env.Start() })
	}
	wg.Wait()
	Expect(errs[0]).NotTo(HaveOccurred())
	Expect(errs[1]).NotTo(HaveOccurred())

	var err error
	hubC, err = client.New(hubEnv.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	memberC, err = client.New(memberEnv.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	Expect(hubC.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: registrationNamespace}})).To(Succeed())
	writeKubeconfigs(GinkgoT().TempDir())
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	for _, env := range []*envtest.Environment{hubEnv, memberEnv} {
		if env != nil {
			Expect(env.Stop()).To(Succeed())
		}
	}
})

var admin = envtest.User{Name: "fleet-admin", Groups: []string{"system:masters"}}

// writeKubeconfigs writes the user's kubeconfig with contexts hub and
// member, and a separate member-only kubeconfig.
func writeKubeconfigs(dir string) {
	merged := clientcmdapi.NewConfig()
	for _, c := range []struct {
		name string
		env  *envtest.Environment
	}{{"hub", hubEnv}, {"member", memberEnv}} {
		u, err := c.env.AddUser(admin, nil)
		Expect(err).NotTo(HaveOccurred())
		data, err := u.KubeConfig()
		Expect(err).NotTo(HaveOccurred())
		one, err := clientcmd.Load(data)
		Expect(err).NotTo(HaveOccurred())
		cur := one.Contexts[one.CurrentContext]
		merged.Clusters[c.name] = one.Clusters[cur.Cluster]
		merged.AuthInfos[c.name] = one.AuthInfos[cur.AuthInfo]
		merged.Contexts[c.name] = &clientcmdapi.Context{Cluster: c.name, AuthInfo: c.name, Namespace: "default"}
		if c.name == "member" {
			memberOnly := merged.DeepCopy()
			memberOnly.Contexts = map[string]*clientcmdapi.Context{"member-admin": merged.Contexts["member"]}
			memberOnly.CurrentContext = "member-admin"
			memberKubeconfig = filepath.Join(dir, "member.kubeconfig")
			Expect(clientcmd.WriteToFile(*memberOnly, memberKubeconfig)).To(Succeed())
		}
	}
	merged.CurrentContext = "hub"
	kubeconfigFile = filepath.Join(dir, "kubeconfig")
	Expect(clientcmd.WriteToFile(*merged, kubeconfigFile)).To(Succeed())
}

// kubeconfigOf writes a kubeconfig of the hub for user, and returns its
// path.
func kubeconfigOf(user envtest.User) string {
	GinkgoHelper()
	u, err := hubEnv.AddUser(user, nil)
	Expect(err).NotTo(HaveOccurred())
	data, err := u.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(GinkgoT().TempDir(), user.Name+".kubeconfig")
	Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
	return path
}

// manifests decodes the objects of a YAML file of the repository.
func manifests(file string) []*unstructured.Unstructured {
	GinkgoHelper()
	data, err := os.ReadFile(file)
	Expect(err).NotTo(HaveOccurred())
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			Expect(err).To(MatchError(io.EOF))
			return out
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

// syncBuffer is a buffer safe to read while a command writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// result is what one run of the command printed and returned.
type result struct {
	out, errOut string
	err         error
}

// run runs `kubectl fleetjob args...` in-process against the hub context.
func run(args ...string) result {
	out, errOut := &syncBuffer{}, &syncBuffer{}
	err := runTo(ctx, out, errOut, args...)
	GinkgoWriter.Printf("$ kubectl fleetjob %s\n%s%s", strings.Join(args, " "), out, errOut)
	if err != nil {
		GinkgoWriter.Printf("error: %v\n", err)
	}
	return result{out: out.String(), errOut: errOut.String(), err: err}
}

func runTo(ctx context.Context, out, errOut *syncBuffer, args ...string) error {
	cmd := cli.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut})
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfigFile}, args...))
	return cmd.ExecuteContext(ctx)
}
