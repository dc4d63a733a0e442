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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
)

var _ = Describe("The ClusterJob CRD", func() {
	It("prints Phase, Clusters, Nodes, Failed and Age, and Retry-Of with -o wide", func() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: "clusterjobs.fleetjob.io"}, crd)).To(Succeed())
		Expect(crd.Spec.Versions).To(HaveLen(1))
		var names []string
		for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			names = append(names, c.Name)
		}
		Expect(names).To(Equal([]string{"Phase", "Clusters", "Nodes", "Failed", "Retry-Of", "Age"}))
		Expect(crd.Spec.Versions[0].Subresources.Status).NotTo(BeNil())
	})
})
