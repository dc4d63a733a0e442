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

package spoke

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// MaxExitReads bounds the pods ReadExitCodes reads one node at a time:
// past it, the pods of the failed nodes' groups are listed instead, a page
// at a time, so that a group where every node fails at once costs a few
// calls, not thousands.
const MaxExitReads = 20

// ReadExitCodes fills in the exit code and termination message of the
// nodes of st whose Job failed and whose result is not recorded yet, from
// their pods, read from live: every one of them, as the result recorded
// next never changes. A node whose pod is gone keeps none. It returns the
// first error of a read; the nodes read before it keep what was read.
func (m Member) ReadExitCodes(ctx context.Context, st *State) error {
	var unread []*NodeState
	for i := range st.Nodes {
		n := &st.Nodes[i]
		if n.Phase == NodeFailed && n.Job != "" && n.ExitCode == nil && !failedByHub(n.Reason) && !st.Recorded.Nodes.Get(n.Node).final() {
			unread = append(unread, st.edit(i))
		}
	}
	if len(unread) > MaxExitReads {
		return m.readGroupExitCodes(ctx, unread)
	}
	for _, n := range unread {
		var pods corev1.PodList
		sel := runSelector(m.Run)
		sel[fleetv1.NodeLabel] = naming.LabelValue(n.Node)
		if err := m.Live.List(ctx, &pods, client.InNamespace(m.Run.Namespace), sel); err != nil {
			return fmt.Errorf("reading the pod of node %s: %w", n.Node, err)
		}
		if pod, ok := NewestPod(pods.Items, n.Node); ok {
			n.ExitCode, n.Output = exitOf(&pod)
		}
	}
	return nil
}

// readGroupExitCodes reads the exit codes of nodes from the pods of their
// groups, listed in pages.
func (m Member) readGroupExitCodes(ctx context.Context, nodes []*NodeState) error {
	byGroup := map[int][]*NodeState{}
	var groups []int
	for _, n := range nodes {
		if byGroup[n.Group] == nil {
			groups = append(groups, n.Group)
		}
		byGroup[n.Group] = append(byGroup[n.Group], n)
	}
	for _, g := range groups {
		want := map[string][]*NodeState{}
		for _, n := range byGroup[g] {
			want[naming.LabelValue(n.Node)] = append(want[naming.LabelValue(n.Node)], n)
		}
		pods := map[string][]corev1.Pod{}
		sel := runSelector(m.Run)
		sel[fleetv1.GroupIndexLabel] = strconv.Itoa(g)
		err := listPages(ctx, m.Live, &corev1.PodList{}, []client.ListOption{client.InNamespace(m.Run.Namespace), sel}, func(list client.ObjectList) {
			for _, pod := range list.(*corev1.PodList).Items {
				if l := pod.Labels[fleetv1.NodeLabel]; want[l] != nil {
					pods[l] = append(pods[l], pod)
				}
			}
		})
		if err != nil {
			return fmt.Errorf("reading the pods of group %d: %w", g, err)
		}
		for l, ns := range want {
			for _, n := range ns {
				if pod, ok := NewestPod(pods[l], n.Node); ok {
					n.ExitCode, n.Output = exitOf(&pod)
				}
			}
		}
	}
	return nil
}

// listPages lists into list, nodePageSize items at a time, and hands each
// page to page; at most maxNodes items in all.
func listPages(ctx context.Context, r client.Reader, list client.ObjectList, opts []client.ListOption, page func(client.ObjectList)) error {
	next := append(slices.Clone(opts), client.Limit(nodePageSize))
	for range maxNodes/nodePageSize + 1 {
		if err := r.List(ctx, list, next...); err != nil {
			return err
		}
		page(list)
		if list.GetContinue() == "" {
			return nil
		}
		next = append(slices.Clone(opts), client.Limit(nodePageSize), client.Continue(list.GetContinue()))
	}
	return fmt.Errorf("more than %d items", maxNodes)
}

// exitOf is the exit code and termination message of the pod's first
// container that failed, else of the first that ended. A reason the
// kubelet gives beyond the exit code (OOMKilled, ContainerCannotRun,
// DeadlineExceeded: any but Error and Completed) comes first: with
// terminationMessagePolicy FallbackToLogsOnError the kubelet always fills
// the message, with the container's last log lines, and an out-of-memory
// kill would read as a bare exit code 137.
func exitOf(pod *corev1.Pod) (*int32, string) {
	statuses := append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...)
	var ended *corev1.ContainerStateTerminated
	for i := range statuses {
		t := statuses[i].State.Terminated
		if t == nil {
			t = statuses[i].LastTerminationState.Terminated
		}
		if t == nil {
			continue
		}
		if t.ExitCode != 0 {
			ended = t
			break
		}
		if ended == nil {
			ended = t
		}
	}
	if ended == nil {
		return nil, ""
	}
	code := ended.ExitCode
	msg := ended.Message
	switch {
	case msg == "":
		msg = ended.Reason
	case ended.Reason != "" && ended.Reason != "Error" && ended.Reason != "Completed":
		msg = ended.Reason + ": " + msg
	}
	return &code, msg
}

// NewestPod is the newest of pods on node, or not scheduled yet. A label
// holds a long node name hashed: the pod's own node tells two such nodes
// apart.
func NewestPod(pods []corev1.Pod, node string) (corev1.Pod, bool) {
	pods = slices.DeleteFunc(slices.Clone(pods), func(p corev1.Pod) bool { return p.Spec.NodeName != "" && p.Spec.NodeName != node })
	if len(pods) == 0 {
		return corev1.Pod{}, false
	}
	return slices.MaxFunc(pods, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) }), true
}
