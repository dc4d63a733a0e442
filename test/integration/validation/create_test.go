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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

const (
	batchMsg        = "batch must be set when type is batch, and only then"
	perNodeGroupMsg = "perNodeGroup must be set when type is perNodeGroup, and only then"
	labelKeyMsg     = "groupLabel must be a valid label key"
)

var _ = Describe("Creating a ClusterJob", func() {
	DescribeTable("rejects an invalid spec naming the field",
		func(obj client.Object, want ...string) {
			expectInvalid(createGenerated(obj), want...)
		},
		// The selectors and the union.
		Entry("missing clusterSelector",
			makeClusterJob().ClusterSelector(nil).Obj(),
			"spec.clusterSelector", "Required value"),
		Entry("missing spec",
			without(makeClusterJob().Obj(), "spec"),
			"spec: Required value"),
		Entry("missing strategy",
			without(makeClusterJob().Obj(), "spec", "strategy"),
			"spec.strategy", "Required value"),
		Entry("missing strategy type",
			without(makeClusterJob().Obj(), "spec", "strategy", "type"),
			"spec.strategy.type", "Required value"),
		Entry("unknown strategy type",
			makeClusterJob().StrategyType("rolling").Obj(),
			"spec.strategy.type", `Unsupported value: "rolling"`),
		Entry("over-long strategy type",
			makeClusterJob().StrategyType(fleetv1.StrategyType(repeat("all", 1000))).Obj(),
			"spec.strategy.type", "Unsupported value"),
		Entry("type batch without the batch block",
			makeClusterJob().StrategyType(fleetv1.StrategyBatch).Obj(),
			"spec.strategy.batch", batchMsg),
		Entry("batch size 0",
			makeClusterJob().Batch(0, "").Obj(),
			"spec.strategy.batch.size", "greater than or equal to 1"),
		Entry("batch size -3",
			makeClusterJob().Batch(-3, "").Obj(),
			"spec.strategy.batch.size", "greater than or equal to 1"),
		Entry("batch size over 100000",
			makeClusterJob().Batch(100001, "").Obj(),
			"spec.strategy.batch.size", "less than or equal to 100000"),
		Entry("batch size missing",
			without(makeClusterJob().Batch(3, "").Obj(), "spec", "strategy", "batch", "size"),
			"spec.strategy.batch.size", "Required value"),
		Entry(`batch order "shuffled"`,
			makeClusterJob().Batch(3, "shuffled").Obj(),
			"spec.strategy.batch.order", `Unsupported value: "shuffled"`),
		Entry("type perNodeGroup without the perNodeGroup block",
			makeClusterJob().StrategyType(fleetv1.StrategyPerNodeGroup).Obj(),
			"spec.strategy.perNodeGroup", perNodeGroupMsg),
		Entry("perNodeGroup without groupLabel",
			without(makeClusterJob().PerNodeGroup("zone", false).Obj(), "spec", "strategy", "perNodeGroup", "groupLabel"),
			"spec.strategy.perNodeGroup.groupLabel", "Required value"),
		Entry("perNodeGroup with an empty groupLabel",
			makeClusterJob().PerNodeGroup("", false).Obj(),
			"spec.strategy.perNodeGroup.groupLabel", "at least 1 chars long"),
		Entry(`groupLabel "bad key!"`,
			makeClusterJob().PerNodeGroup("bad key!", false).Obj(),
			"spec.strategy.perNodeGroup.groupLabel", labelKeyMsg),
		Entry(`groupLabel "-zone"`,
			makeClusterJob().PerNodeGroup("-zone", false).Obj(),
			"spec.strategy.perNodeGroup.groupLabel", labelKeyMsg),
		Entry("groupLabel with an empty prefix",
			makeClusterJob().PerNodeGroup("/zone", false).Obj(),
			"spec.strategy.perNodeGroup.groupLabel", labelKeyMsg),
		Entry("groupLabel with a 64-character name",
			makeClusterJob().PerNodeGroup("example.com/"+repeat("z", 64), false).Obj(),
			"spec.strategy.perNodeGroup.groupLabel", labelKeyMsg),
		Entry("groupLabel of 318 characters",
			makeClusterJob().PerNodeGroup(repeat("a", 254)+"/"+repeat("z", 63), false).Obj(),
			"spec.strategy.perNodeGroup.groupLabel", "Too long", "317"),
		Entry("perNodeGroup block with type batch",
			makeClusterJob().Strategy(fleetv1.Strategy{
				Type:         fleetv1.StrategyBatch,
				PerNodeGroup: &fleetv1.PerNodeGroupStrategy{GroupLabel: "zone"},
			}).Obj(),
			"spec.strategy.batch", batchMsg, "spec.strategy.perNodeGroup", perNodeGroupMsg),
		Entry("both batch and perNodeGroup",
			makeClusterJob().Strategy(fleetv1.Strategy{
				Type:         fleetv1.StrategyBatch,
				Batch:        &fleetv1.BatchStrategy{Size: 3},
				PerNodeGroup: &fleetv1.PerNodeGroupStrategy{GroupLabel: "zone"},
			}).Obj(),
			"spec.strategy.perNodeGroup", perNodeGroupMsg),
		Entry("batch block with type all",
			makeClusterJob().Batch(3, "").StrategyType(fleetv1.StrategyAll).Obj(),
			"spec.strategy.batch", batchMsg),
		Entry("perNodeGroup block with type all",
			makeClusterJob().PerNodeGroup("zone", false).StrategyType(fleetv1.StrategyAll).Obj(),
			"spec.strategy.perNodeGroup", perNodeGroupMsg),

		Entry("clusterSelector with an unknown operator",
			withField(makeClusterJob().Obj(), map[string]any{"matchExpressions": []any{
				map[string]any{"key": "env", "operator": "Equals", "values": []any{"prod"}},
			}}, "spec", "clusterSelector"),
			"spec.clusterSelector", "operator must be In, NotIn, Exists or DoesNotExist"),
		Entry("nodeSelector In without values",
			withField(makeClusterJob().Obj(), map[string]any{"matchExpressions": []any{
				map[string]any{"key": "topology.kubernetes.io/zone", "operator": "In"},
			}}, "spec", "nodeSelector"),
			"spec.nodeSelector", "values must be set for In and NotIn"),

		// Run-wide settings.
		Entry(`failureStrategy "stop"`,
			makeClusterJob().FailureStrategy("stop").Obj(),
			"spec.failureStrategy", `Unsupported value: "stop"`),
		Entry("maxConcurrentClusters -1",
			makeClusterJob().MaxConcurrentClusters(-1).Obj(),
			"spec.clusterRollout.maxConcurrentClusters", "greater than or equal to 1"),
		Entry("maxConcurrentClusters 0",
			makeClusterJob().MaxConcurrentClusters(0).Obj(),
			"spec.clusterRollout.maxConcurrentClusters", "greater than or equal to 1"),
		Entry("maxConcurrentClusters over 10000",
			makeClusterJob().MaxConcurrentClusters(10001).Obj(),
			"spec.clusterRollout.maxConcurrentClusters", "less than or equal to 10000"),
		Entry("clusterRollout without maxConcurrentClusters",
			withField(makeClusterJob().Obj(), map[string]any{}, "spec", "clusterRollout"),
			"spec.clusterRollout.maxConcurrentClusters", "Required value"),

		// The Job template: one Job runs one pod on its node.
		Entry("missing jobTemplate",
			without(makeClusterJob().Obj(), "spec", "jobTemplate"),
			"spec.jobTemplate", "Required value"),
		Entry("jobTemplate without containers",
			makeClusterJob().JobTemplate(batchv1.JobTemplateSpec{}).Obj(),
			"spec.jobTemplate.spec.template.spec.containers", "Required value"),
		// Rejected today only through a runtime error of the jobTemplate
		// CEL rules ("no such key: spec evaluating rule: jobTemplate.spec.
		// selector must not be set..."), which points at the wrong thing.
		Entry("jobTemplate without spec",
			withField(makeClusterJob().Obj(), map[string]any{}, "spec", "jobTemplate"),
			"spec.jobTemplate"),
		Entry("jobTemplate without a pod spec",
			without(makeClusterJob().Obj(), "spec", "jobTemplate", "spec", "template", "spec"),
			"spec.jobTemplate"),
		Entry("jobTemplate with spec.selector",
			makeClusterJob().JobSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}).Obj(),
			"spec.jobTemplate", "jobTemplate.spec.selector must not be set: fleetjob selects each Job's pod itself"),
		Entry("jobTemplate with manualSelector true",
			makeClusterJob().ManualSelector(true).Obj(),
			"spec.jobTemplate", "jobTemplate.spec.manualSelector must not be true"),
		Entry("jobTemplate with parallelism 2",
			makeClusterJob().Parallelism(2).Obj(),
			"spec.jobTemplate", "jobTemplate.spec.parallelism must be 1: one Job runs one pod on its node"),
		Entry("jobTemplate with parallelism 0",
			makeClusterJob().Parallelism(0).Obj(),
			"spec.jobTemplate", "jobTemplate.spec.parallelism must be 1"),
		Entry("jobTemplate with completions 3",
			makeClusterJob().Completions(3).Obj(),
			"spec.jobTemplate", "jobTemplate.spec.completions must be 1: one Job runs one pod on its node"),
		Entry("jobTemplate with completionMode Indexed",
			makeClusterJob().CompletionMode(batchv1.IndexedCompletion).Obj(),
			"spec.jobTemplate", "jobTemplate.spec.completionMode must be NonIndexed"),
		Entry("jobTemplate with ttlSecondsAfterFinished",
			makeClusterJob().TTLSecondsAfterFinished(3600).Obj(),
			"spec.jobTemplate", "jobTemplate.spec.ttlSecondsAfterFinished must not be set: a finished Job is the node's result"),
		Entry("nodeStartTimeout under a second",
			func() *fleetv1.ClusterJob {
				cj := makeClusterJob().Obj()
				cj.Spec.NodeStartTimeout = &metav1.Duration{Duration: 500 * time.Millisecond}
				return cj
			}(),
			"spec.nodeStartTimeout", "nodeStartTimeout must be at least 1s"),
		Entry("nodeLostTimeout under 10s",
			func() *fleetv1.ClusterJob {
				cj := makeClusterJob().Obj()
				cj.Spec.NodeLostTimeout = &metav1.Duration{Duration: 5 * time.Second}
				return cj
			}(),
			"spec.nodeLostTimeout", "nodeLostTimeout must be from 10s to 24h"),
		Entry("nodeLostTimeout over a day",
			func() *fleetv1.ClusterJob {
				cj := makeClusterJob().Obj()
				cj.Spec.NodeLostTimeout = &metav1.Duration{Duration: 25 * time.Hour}
				return cj
			}(),
			"spec.nodeLostTimeout", "nodeLostTimeout must be from 10s to 24h"),
		Entry("jobTemplate with suspend true",
			makeClusterJob().JobSuspend(true).Obj(),
			"spec.jobTemplate", "jobTemplate.spec.suspend must not be true"),
		Entry("jobTemplate with managedBy",
			makeClusterJob().ManagedBy("kueue.x-k8s.io/multikueue").Obj(),
			"spec.jobTemplate", "jobTemplate.spec.managedBy must not be set"),
		Entry("jobTemplate with template nodeName",
			makeClusterJob().NodeName("node-1").Obj(),
			"spec.jobTemplate", "jobTemplate.spec.template.spec.nodeName must not be set: fleetjob pins each Job to its node by node affinity"),
		// Failure budgets.
		Entry("failurePolicy without a budget",
			makeClusterJob().FailurePolicy(fleetv1.FailurePolicy{OnExceeded: fleetv1.OnExceededStop}).Obj(),
			"spec.failurePolicy", "failurePolicy must set at least one of"),
		Entry("a negative maxFailedNodesPerGroup",
			makeClusterJob().FailurePolicy(fleetv1.FailurePolicy{MaxFailedNodesPerGroup: intOrString(-1)}).Obj(),
			"spec.failurePolicy.maxFailedNodesPerGroup", "must be a number of at least 0 or a percentage from 0% to 100%"),
		Entry("maxFailedNodesPerCluster not a percentage",
			makeClusterJob().FailurePolicy(fleetv1.FailurePolicy{MaxFailedNodesPerCluster: percent("five")}).Obj(),
			"spec.failurePolicy.maxFailedNodesPerCluster", "must be a number of at least 0 or a percentage from 0% to 100%"),
		Entry("maxFailedNodes over 100%",
			makeClusterJob().FailurePolicy(fleetv1.FailurePolicy{MaxFailedNodes: percent("101%")}).Obj(),
			"spec.failurePolicy.maxFailedNodes", "must be a number of at least 0 or a percentage from 0% to 100%"),
		Entry("maxFailedClusters a fraction of a percent",
			makeClusterJob().FailurePolicy(fleetv1.FailurePolicy{MaxFailedClusters: percent("0.5%")}).Obj(),
			"spec.failurePolicy.maxFailedClusters", "must be a number of at least 0 or a percentage from 0% to 100%"),
		Entry("an unknown onExceeded",
			makeClusterJob().FailurePolicy(fleetv1.FailurePolicy{MaxFailedNodes: intOrString(1), OnExceeded: "Pause"}).Obj(),
			"spec.failurePolicy.onExceeded", `Unsupported value: "Pause"`),
		// Gates.
		Entry("a negative soak",
			makeClusterJob().Gates(fleetv1.Gates{Soak: &metav1.Duration{Duration: -time.Second}}).Obj(),
			"spec.gates.soak", "soak must not be negative"),
		Entry("a progressDeadline under 1s",
			makeClusterJob().Gates(fleetv1.Gates{ProgressDeadline: &metav1.Duration{Duration: 500 * time.Millisecond}}).Obj(),
			"spec.gates.progressDeadline", "progressDeadline must be at least 1s"),
		Entry("a negative betweenClusters soak",
			makeClusterJob().MaxConcurrentClusters(1).Gates(fleetv1.Gates{BetweenClusters: &fleetv1.BetweenClustersGate{Soak: metav1.Duration{Duration: -time.Minute}}}).Obj(),
			"spec.gates.betweenClusters.soak", "betweenClusters.soak must not be negative"),
		Entry("betweenClusters without clusterRollout",
			makeClusterJob().Gates(fleetv1.Gates{BetweenClusters: &fleetv1.BetweenClustersGate{Soak: metav1.Duration{Duration: time.Minute}}}).Obj(),
			"spec.gates.betweenClusters", "gates.betweenClusters needs clusterRollout.maxConcurrentClusters"),
		Entry("a nodeHealth timeout under readyFor",
			makeClusterJob().Gates(fleetv1.Gates{NodeHealth: &fleetv1.NodeHealthGate{ReadyFor: metav1.Duration{Duration: time.Minute}, Timeout: metav1.Duration{Duration: 30 * time.Second}}}).Obj(),
			"spec.gates.nodeHealth", "nodeHealth.timeout must be at least nodeHealth.readyFor"),
		Entry("a negative nodeHealth readyFor",
			makeClusterJob().Gates(fleetv1.Gates{NodeHealth: &fleetv1.NodeHealthGate{ReadyFor: metav1.Duration{Duration: -time.Second}, Timeout: metav1.Duration{Duration: time.Minute}}}).Obj(),
			"spec.gates.nodeHealth.readyFor", "nodeHealth.readyFor must not be negative"),
		// Retry.
		Entry("retry without retryOf",
			makeClusterJob().Retry(fleetv1.Retry{Include: []fleetv1.RetryInclude{fleetv1.RetrySkipped}}).Obj(),
			"spec.retry", "retry needs retryOf"),
		Entry("an unknown retry.include",
			makeClusterJob().RetryOf("parent", "Succeeded").Obj(),
			"spec.retry.include[0]", `Unsupported value: "Succeeded"`),
		Entry("a retryOf without a name",
			makeClusterJob().RetryOf("").Obj(),
			"spec.retryOf.name", "should be at least 1 chars long"),
		Entry("failurePolicy with failureStrategy exit",
			makeClusterJob().FailureStrategy(fleetv1.FailureStrategyExit).FailurePolicy(fleetv1.FailurePolicy{MaxFailedNodes: intOrString(1)}).Obj(),
			"spec.failurePolicy", "failurePolicy and failureStrategy exit exclude each other"),
	)

	It("accepts every sample in config/samples", func() {
		for _, f := range sampleFiles() {
			By(filepath.Base(f))
			Expect(createGenerated(readSample(f))).To(Succeed(), f)
		}
	})

	It("stores every sample as written, apart from defaults", func() {
		for _, f := range sampleFiles() {
			By(filepath.Base(f))
			cj := readSample(f)
			want := cj.Spec.DeepCopy()
			Expect(createGenerated(cj)).To(Succeed(), f)
			if want.FailureStrategy == "" {
				want.FailureStrategy = fleetv1.FailureStrategyKeepGoing
			}
			if want.Strategy.Batch != nil && want.Strategy.Batch.Order == "" {
				want.Strategy.Batch.Order = fleetv1.BatchOrderAlphabetical
			}
			if want.NodeStartTimeout == nil {
				want.NodeStartTimeout = &metav1.Duration{Duration: fleetv1.DefaultNodeStartTimeout}
			}
			if want.NodeLostTimeout == nil {
				want.NodeLostTimeout = &metav1.Duration{Duration: fleetv1.DefaultNodeLostTimeout}
			}
			Expect(cj.Spec).To(Equal(*want), f)
		}
	})

	It("keeps the labels and annotations of the Job and pod templates", func() {
		cj := makeClusterJob().PodAnnotation("pod-complete.stage.kwok.x-k8s.io/delay", "1s").Obj()
		cj.Spec.JobTemplate.Labels = map[string]string{"team": "platform"}
		cj.Spec.JobTemplate.Spec.Template.Labels = map[string]string{"app": "kernel-check"}
		Expect(createGenerated(cj)).To(Succeed())
		Expect(cj.Spec.JobTemplate.Labels).To(HaveKeyWithValue("team", "platform"))
		Expect(cj.Spec.JobTemplate.Spec.Template.Labels).To(HaveKeyWithValue("app", "kernel-check"))
		Expect(cj.Spec.JobTemplate.Spec.Template.Annotations).To(HaveKeyWithValue("pod-complete.stage.kwok.x-k8s.io/delay", "1s"))
	})

	It("accepts every cluster ({}) with strategy all and applies the defaults", func() {
		cj := makeClusterJob().Obj()
		Expect(createGenerated(cj)).To(Succeed())
		Expect(cj.Spec.ClusterSelector).To(Equal(&metav1.LabelSelector{}))
		Expect(cj.Spec.Strategy).To(Equal(fleetv1.Strategy{Type: fleetv1.StrategyAll}))
		Expect(cj.Spec.FailureStrategy).To(Equal(fleetv1.FailureStrategyKeepGoing))
		Expect(cj.Spec.NodeStartTimeout).To(Equal(&metav1.Duration{Duration: 10 * time.Minute}))
		Expect(cj.Spec.NodeLostTimeout).To(Equal(&metav1.Duration{Duration: 10 * time.Minute}))
	})

	It("defaults the batch order to alphabetical", func() {
		cj := makeClusterJob().Batch(3, "").Obj()
		Expect(createGenerated(cj)).To(Succeed())
		Expect(cj.Spec.Strategy.Batch.Order).To(Equal(fleetv1.BatchOrderAlphabetical))
		Expect(cj.Spec.FailureStrategy).To(Equal(fleetv1.FailureStrategyKeepGoing))
	})

	DescribeTable("rejects an invalid maintenance window naming the field",
		func(cj *fleetv1.ClusterJob, want ...string) {
			expectInvalid(createGenerated(cj), want...)
		},
		Entry("no schedule", makeClusterJob().Windows(fleetv1.MaintenanceWindow{Duration: metav1.Duration{Duration: time.Hour}}).Obj(),
			"spec.maintenanceWindows[0].schedule", "at least 6 chars long"),
		Entry("a duration under a minute", makeClusterJob().Windows(window("0 22 * * *", 30*time.Second)).Obj(),
			"spec.maintenanceWindows[0]", "duration must be from 1m to 168h"),
		Entry("a duration over a week", makeClusterJob().Windows(window("0 22 * * *", 169*time.Hour)).Obj(),
			"spec.maintenanceWindows[0]", "duration must be from 1m to 168h"),
		Entry("a time zone with spaces", makeClusterJob().Windows(func() fleetv1.MaintenanceWindow {
			w := window("0 22 * * *", time.Hour)
			w.TimeZone = "Europe/New York"
			return w
		}()).Obj(), "spec.maintenanceWindows[0].timeZone", "should match"),
		Entry("a blackout date that is no date", makeClusterJob().Windows(func() fleetv1.MaintenanceWindow {
			w := window("0 22 * * *", time.Hour)
			w.BlackoutDates = []fleetv1.Date{"2026-12-24", "24.12.2026"}
			return w
		}()).Obj(), "spec.maintenanceWindows[0].blackoutDates[1]", "should match"),
		Entry("nine windows", makeClusterJob().Windows(slices.Repeat([]fleetv1.MaintenanceWindow{window("0 22 * * *", time.Hour)}, 9)...).Obj(),
			"spec.maintenanceWindows", "must have at most 8 items"),
		Entry("maxWindowWait under an hour", makeClusterJob().Windows(window("0 22 * * *", time.Hour)).MaxWindowWait(time.Minute).Obj(),
			"spec.maxWindowWait", "maxWindowWait must be from 1h to 8784h"),
	)

	It("accepts maintenance windows at their bounds", func() {
		w := window("0 22 * * 1-5", 168*time.Hour)
		w.TimeZone, w.BlackoutDates = "America/Argentina/Buenos_Aires", []fleetv1.Date{"2026-12-24", "2026-12-31"}
		cj := makeClusterJob().Windows(w, window("@weekly", time.Minute)).MaxWindowWait(8784 * time.Hour).Obj()
		Expect(createGenerated(cj)).To(Succeed())
	})

	DescribeTable("accepts values at their bounds",
		func(cj *fleetv1.ClusterJob) {
			Expect(createGenerated(cj)).To(Succeed())
		},
		Entry("batch size 1", makeClusterJob().Batch(1, fleetv1.BatchOrderRandom).Obj()),
		Entry("batch size 100000", makeClusterJob().Batch(100000, "").Obj()),
		Entry("groupLabel of 317 characters (253-character prefix, 63-character name)",
			makeClusterJob().PerNodeGroup(longDNSSubdomain(253)+"/"+repeat("z", 63), true).Obj()),
		Entry("groupLabel without a prefix", makeClusterJob().PerNodeGroup("zone", false).Obj()),
		Entry("maxConcurrentClusters 1", makeClusterJob().MaxConcurrentClusters(1).Obj()),
		Entry("maxConcurrentClusters 10000", makeClusterJob().MaxConcurrentClusters(10000).Obj()),
		Entry("parallelism, completions 1 and NonIndexed",
			makeClusterJob().Parallelism(1).Completions(1).CompletionMode(batchv1.NonIndexedCompletion).ManualSelector(false).Obj()),
		Entry("failureStrategy exit and suspend", makeClusterJob().FailureStrategy(fleetv1.FailureStrategyExit).Suspend(true).Obj()),
		Entry("every budget at 0 and 0%", makeClusterJob().FailurePolicy(fleetv1.FailurePolicy{MaxFailedNodesPerGroup: intOrString(0),
			MaxFailedNodesPerCluster: percent("0%"), MaxFailedNodes: intOrString(0), MaxFailedClusters: percent("0%")}).Obj()),
		Entry("budgets at 100% and a large number, onExceeded Suspend", makeClusterJob().FailurePolicy(fleetv1.FailurePolicy{
			MaxFailedNodesPerGroup: percent("100%"), MaxFailedNodes: intOrString(1000000), OnExceeded: fleetv1.OnExceededSuspend}).Obj()),
	)

	It("accepts every gate", func() {
		cj := makeClusterJob().MaxConcurrentClusters(1).Gates(fleetv1.Gates{
			Soak: &metav1.Duration{Duration: 0}, ProgressDeadline: &metav1.Duration{Duration: time.Second},
			BetweenClusters: &fleetv1.BetweenClustersGate{Soak: metav1.Duration{Duration: 10 * time.Minute}},
		}).Obj()
		Expect(createGenerated(cj)).To(Succeed())
	})

	It("refuses a ClusterJob that retries itself", func() {
		cj := makeClusterJob().RetryOf("self").Obj()
		cj.Name = "self"
		expectInvalid(k8sClient.Create(ctx, cj), "spec.retryOf.name must name another ClusterJob: a run cannot retry itself")
	})

	It("defaults retry.include to Failed and accepts every kind", func() {
		cj := makeClusterJob().RetryOf("parent").Retry(fleetv1.Retry{Clusters: []string{"member-a"}}).Obj()
		Expect(createGenerated(cj)).To(Succeed())
		Expect(cj.Spec.Retry.Include).To(Equal([]fleetv1.RetryInclude{fleetv1.RetryFailed}))
		all := makeClusterJob().RetryOf("parent", fleetv1.RetryFailed, fleetv1.RetrySkipped, fleetv1.RetryUnreachable, fleetv1.RetryNotRun).Obj()
		Expect(createGenerated(all)).To(Succeed())
	})

	It("defaults nodeHealth to readyFor 60s within 5m", func() {
		cj := makeClusterJob().Gates(fleetv1.Gates{NodeHealth: &fleetv1.NodeHealthGate{}}).Obj()
		Expect(createGenerated(cj)).To(Succeed())
		Expect(*cj.Spec.Gates.NodeHealth).To(Equal(fleetv1.NodeHealthGate{ReadyFor: metav1.Duration{Duration: time.Minute}, Timeout: metav1.Duration{Duration: 5 * time.Minute}}))
	})

	It("defaults failurePolicy.onExceeded to Stop", func() {
		cj := makeClusterJob().FailurePolicy(fleetv1.FailurePolicy{MaxFailedNodes: percent("5%")}).Obj()
		Expect(createGenerated(cj)).To(Succeed())
		Expect(cj.Spec.FailurePolicy.OnExceeded).To(Equal(fleetv1.OnExceededStop))
	})
})

// sampleFiles returns the sample ClusterJobs in config/samples.
func sampleFiles() []string {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "config", "samples", "fleetjob_v1alpha1_clusterjob_*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(len(files)).To(BeNumerically(">=", 4), "one sample per strategy")
	return files
}

// readSample decodes a sample strictly, so a misspelt field fails here
// instead of being pruned silently by the API server, and moves it to the
// suite's namespace.
func readSample(file string) *fleetv1.ClusterJob {
	GinkgoHelper()
	data, err := os.ReadFile(file)
	Expect(err).NotTo(HaveOccurred())
	cj := &fleetv1.ClusterJob{}
	Expect(yaml.UnmarshalStrict(data, cj)).To(Succeed(), file)
	Expect(cj.APIVersion).To(Equal(fleetv1.GroupVersion.String()), file)
	Expect(cj.Kind).To(Equal("ClusterJob"), file)
	Expect(cj.Namespace).To(Equal("default"), file)
	cj.Namespace = ns
	return cj
}

// longDNSSubdomain returns a valid DNS subdomain of exactly n characters:
// 63-character labels joined by dots.
func longDNSSubdomain(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(repeat("p", min(63, n-b.Len())))
	}
	return b.String()
}

func window(schedule string, d time.Duration) fleetv1.MaintenanceWindow {
	return fleetv1.MaintenanceWindow{Schedule: schedule, Duration: metav1.Duration{Duration: d}}
}

func intOrString(n int32) *intstr.IntOrString { v := intstr.FromInt32(n); return &v }

func percent(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
