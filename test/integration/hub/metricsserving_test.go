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

package hub

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetjob/fleetjob/hub/controller"
)

// The hub serves /metrics as config/ deploys it: HTTPS, to bearer tokens its
// API server authenticates and allows to get /metrics, the hub itself
// reviewing them with exactly the ClusterRole of config/rbac.
var _ = Describe("The hub's metrics endpoint", Ordered, func() {
	const reader, stranger = "metrics-scraper", "metrics-stranger"
	var (
		stopHub func()
		url     string
		scraper *http.Client
	)

	BeforeAll(func() {
		for _, f := range []string{"service_account.yaml", "role.yaml", "role_binding.yaml", "secrets_role_binding.yaml",
			"leader_election_role.yaml", "leader_election_role_binding.yaml", "metrics_reader_role.yaml"} {
			applyManifests(filepath.Join("..", "..", "..", "config", "rbac", f))
		}
		for _, sa := range []string{reader, stranger} {
			Expect(client.IgnoreAlreadyExists(hubC.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: workNamespace, Name: sa}}))).To(Succeed())
		}
		Expect(client.IgnoreAlreadyExists(hubC.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-metrics-reader-" + reader},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "fleetjob-metrics-reader"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: workNamespace, Name: reader}},
		}))).To(Succeed())

		// A certificate mounted as --metrics-cert-path, so that the
		// scraper verifies who it talks to, as a Prometheus given the CA
		// would.
		certDir := GinkgoT().TempDir()
		certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(certDir, "tls.crt"), certPEM, 0o600)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(certDir, "tls.key"), keyPEM, 0o600)).To(Succeed())
		roots := x509.NewCertPool()
		Expect(roots.AppendCertsFromPEM(certPEM)).To(BeTrue())
		scraper = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}

		addr := freeAddr()
		url = "https://" + addr + "/metrics"
		stopHub = startHub(hubOptions{config: saConfig("fleetjob-hub"), metrics: &controller.MetricsServing{
			BindAddress: addr, Secure: true, CertDir: certDir, CertName: "tls.crt", KeyName: "tls.key",
		}})
	})
	AfterAll(func() { cleanUp(stopHub) })

	// scrape gets /metrics with token ("" for none).
	scrape := func(token string) func(Gomega) scraped {
		return func(g Gomega) scraped {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			g.Expect(err).NotTo(HaveOccurred())
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := scraper.Do(req)
			g.Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			g.Expect(err).NotTo(HaveOccurred())
			return scraped{Status: resp.StatusCode, Body: string(body)}
		}
	}

	It("serves the hub's metrics to a token bound to ClusterRole fleetjob-metrics-reader", func() {
		Eventually(scrape(saToken(reader))).Should(And(
			HaveField("Status", http.StatusOK),
			HaveField("Body", ContainSubstring("fleetjob_build_info{commit=")),
			HaveField("Body", ContainSubstring("controller_runtime_")),
		))
	})

	It("refuses an authenticated identity without it (403), naming it", func() {
		Eventually(scrape(saToken(stranger))).Should(And(
			HaveField("Status", http.StatusForbidden),
			HaveField("Body", ContainSubstring("system:serviceaccount:"+workNamespace+":"+stranger)),
			HaveField("Body", Not(ContainSubstring("fleetjob_"))),
		))
	})

	It("refuses a request without a token (401), and a token its API server does not know", func() {
		Eventually(scrape("")).Should(And(
			HaveField("Status", http.StatusUnauthorized),
			HaveField("Body", Not(ContainSubstring("fleetjob_"))),
		))
		// controller-runtime's filter answers 500 here: the TokenReview
		// of a forged token comes back with an error, which it does not
		// tell from the API server failing.
		Eventually(scrape("forged-token")).Should(And(
			HaveField("Status", Not(Equal(http.StatusOK))),
			HaveField("Body", Not(ContainSubstring("fleetjob_"))),
		))
	})

	It("serves no metrics over plain HTTP, even to the reader's token", func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.Replace(url, "https://", "http://", 1), nil)
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+saToken(reader))
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		Expect(err).NotTo(HaveOccurred(), "Go's TLS server answers a plain request with 400")
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusBadRequest))
	})
})

// scraped is one answer of the metrics endpoint.
type scraped struct {
	Status int
	Body   string
}

// saToken is a one-hour token of ServiceAccount name in the work namespace,
// from the TokenRequest API.
func saToken(name string) string {
	GinkgoHelper()
	cs, err := kubernetes.NewForConfig(hubEnv.Config)
	Expect(err).NotTo(HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(workNamespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}

// saConfig is the suite's hub API server as ServiceAccount name.
func saConfig(name string) *rest.Config {
	cfg := rest.AnonymousClientConfig(hubEnv.Config)
	cfg.BearerToken = saToken(name)
	return cfg
}

// freeAddr is a loopback address whose port was free a moment ago.
func freeAddr() string {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}
