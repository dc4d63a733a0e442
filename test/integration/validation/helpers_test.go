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

package validation

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

// makeClusterJob starts a valid ClusterJob in the suite's namespace; the name
// is replaced by a generated one when the object is created.
func makeClusterJob() *wrappers.ClusterJobWrapper {
	return wrappers.MakeClusterJob("cj", ns)
}

// without returns the object as unstructured with the field at path removed,
// for "missing" cases that the typed struct cannot express (it always sends
// its non-pointer fields). Table entries call it while the spec tree is
// built, where assertions are not allowed, so it panics on a broken object.
func without(cj *fleetv1.ClusterJob, path ...string) client.Object {
	u := toUnstructured(cj)
	unstructured.RemoveNestedField(u.Object, path...)
	return u
}

// withField returns the object as unstructured with the field at path set
// to value, as without does.
func withField(cj *fleetv1.ClusterJob, value any, path ...string) client.Object {
	u := toUnstructured(cj)
	if err := unstructured.SetNestedField(u.Object, value, path...); err != nil {
		panic(err)
	}
	return u
}

func toUnstructured(cj *fleetv1.ClusterJob) *unstructured.Unstructured {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cj)
	if err != nil {
		panic(err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(fleetv1.GroupVersion.WithKind("ClusterJob"))
	return u
}

// createGenerated creates obj under a generated name, so a table entry that
// is wrongly accepted does not collide with the next one (or with itself
// under --repeat), and deletes it after the spec if it was created.
func createGenerated(obj client.Object) error {
	obj.SetName("")
	obj.SetGenerateName("cj-")
	obj.SetResourceVersion("")
	obj.SetNamespace(ns)
	err := k8sClient.Create(ctx, obj)
	if err == nil {
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed())
		})
	}
	return err
}

// expectInvalid asserts err is a 422 Invalid whose message contains every
// one of want (the field path, and the CEL message where there is one).
func expectInvalid(err error, want ...string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred(), "the API server accepted the object")
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want an Invalid error, got %v", err)
	for _, w := range want {
		Expect(err.Error()).To(ContainSubstring(w))
	}
	GinkgoWriter.Println(err.Error())
}

// repeat returns s repeated to exactly n bytes.
func repeat(s string, n int) string {
	return strings.Repeat(s, n/len(s)+1)[:n]
}
