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
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/clusters"
)

// The hub's cache holds the member kubeconfigs and nothing else of the
// namespace they share with other Secrets (TLS keys, tokens).
var _ = Describe("The hub's Secret cache", func() {
	It("holds only the Secrets labelled as registrations, and drops one whose label is removed", func() {
		c, err := cache.New(hubEnv.Config, cache.Options{Scheme: scheme, ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: clusters.RegistrationSecrets(workNamespace),
		}})
		Expect(err).NotTo(HaveOccurred())
		cacheCtx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		go func() {
			defer GinkgoRecover()
			Expect(c.Start(cacheCtx)).To(Succeed())
		}()

		secrets := []*corev1.Secret{
			registration("cached-registration", []byte("not read here"), nil, ""),
			{ObjectMeta: metav1.ObjectMeta{Namespace: workNamespace, Name: "cached-not-tls"}, Data: map[string][]byte{"tls.key": []byte("x")}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: workNamespace, Name: "cached-not-false",
				Labels: map[string]string{fleetv1.RegistrationLabel: "false"}}, Data: map[string][]byte{fleetv1.KubeconfigKey: []byte("x")}},
		}
		for _, s := range secrets {
			Expect(hubC.Create(ctx, s)).To(Succeed())
			DeferCleanup(func() { Expect(client.IgnoreNotFound(hubC.Delete(ctx, s))).To(Succeed()) })
		}
		cachedNames := func(g Gomega) []string {
			list := &corev1.SecretList{}
			g.Expect(c.List(ctx, list, client.InNamespace(workNamespace))).To(Succeed())
			var names []string
			for _, s := range list.Items {
				if strings.HasPrefix(s.Name, "cached-") { // not another spec's
					names = append(names, s.Name)
				}
			}
			return names
		}
		Eventually(cachedNames).Should(ConsistOf("cached-registration"))
		Expect(c.Get(ctx, client.ObjectKeyFromObject(secrets[1]), &corev1.Secret{})).To(MatchError(ContainSubstring("not found")))
		Expect(c.List(ctx, &corev1.SecretList{}, client.InNamespace("default"))).To(MatchError(ContainSubstring("unknown namespace")),
			"Secrets of other namespaces are not cached at all")

		unlabelled := secrets[0].DeepCopy()
		delete(unlabelled.Labels, fleetv1.RegistrationLabel)
		Expect(hubC.Patch(ctx, unlabelled, client.MergeFrom(secrets[0]))).To(Succeed())
		Eventually(cachedNames).Should(BeEmpty(), "a Secret that is no longer a registration leaves the cache, as if deleted")
	})

	// The hub's cache sees a Secret that loses the label as deleted: the
	// member must be forgotten as when its Secret is deleted.
	It("makes the hub forget a member whose registration loses the label", func() {
		register(members["member-a"], admin, nil)
		stopHub := startHub(hubOptions{})
		DeferCleanup(func() { cleanUp(stopHub) })
		Eventually(func() bool { m, _ := registry.Member("member-a"); return m.Engaged }).Should(BeTrue())

		secret := &corev1.Secret{}
		Expect(hubC.Get(ctx, client.ObjectKey{Namespace: workNamespace, Name: "member-a"}, secret)).To(Succeed())
		unlabelled := secret.DeepCopy()
		delete(unlabelled.Labels, fleetv1.RegistrationLabel)
		Expect(hubC.Patch(ctx, unlabelled, client.MergeFrom(secret))).To(Succeed())
		Eventually(func() bool { _, known := registry.Member("member-a"); return known }).Should(BeFalse())
	})
})
