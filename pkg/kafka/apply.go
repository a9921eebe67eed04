package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ApplyReport says what ApplyTopics did, topic by topic in spec order.
type ApplyReport struct {
	Created   []string
	Updated   []TopicUpdate
	Unchanged []string
	// Notes are differences ApplyTopics does not fix: Kafka cannot lower a
	// partition count (it would remap every key), nor change a replication
	// factor without a reassignment.
	Notes []string
}

// TopicUpdate lists the changes made to one existing topic.
type TopicUpdate struct {
	Name    string
	Changes []string
}

// Changed reports whether anything was created or updated.
func (r ApplyReport) Changed() bool { return len(r.Created) > 0 || len(r.Updated) > 0 }

// String renders the report for `trawler topics apply`.
func (r ApplyReport) String() string {
	var b strings.Builder
	for _, n := range r.Created {
		fmt.Fprintf(&b, "created   %s\n", n)
	}
	for _, u := range r.Updated {
		fmt.Fprintf(&b, "updated   %s: %s\n", u.Name, strings.Join(u.Changes, "; "))
	}
	for _, n := range r.Unchanged {
		fmt.Fprintf(&b, "unchanged %s\n", n)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note      %s\n", n)
	}
	return b.String()
}

// ApplyTopics makes the cluster match specs: missing topics are created,
// partition counts raised (never lowered: see ApplyReport.Notes) and configs
// that differ from the spec set. Configs the spec does not mention are left
// alone, so an operator's own tuning survives. partitionsOverride, if
// positive, replaces every spec's partition count (single-machine mode needs
// fewer). Applying twice changes nothing the second time.
//
// It carries on past a failing topic and returns the report of what was
// done with all the errors joined.
func ApplyTopics(ctx context.Context, adm *kadm.Client, specs []TopicSpec, partitionsOverride int32) (ApplyReport, error) {
	var rep ApplyReport
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	// kadm answers from a metadata cache by default; asking for authorized
	// operations forces a fresh request, so a second apply right after the
	// first sees the partitions it added.
	details, err := adm.ListTopics(kadm.WithAuthorizedOps(ctx), names...)
	if err != nil {
		return rep, fmt.Errorf("list topics: %w", err)
	}
	var existing, missing []TopicSpec
	var errs []error
	for _, s := range specs {
		if partitionsOverride > 0 {
			s.Partitions = partitionsOverride
		}
		d, ok := details[s.Name]
		switch {
		case !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			missing = append(missing, s)
		case d.Err != nil:
			errs = append(errs, fmt.Errorf("topic %s: %w", s.Name, d.Err))
		default:
			existing = append(existing, s)
		}
	}
	// A new cluster creates every topic: one request each, sent together
	// (they differ in configs), rather than a round trip after another.
	created := make([]error, len(missing))
	var wg sync.WaitGroup
	for i, s := range missing {
		wg.Go(func() { created[i] = createTopic(ctx, adm, s) })
	}
	wg.Wait()
	for i, s := range missing {
		if created[i] != nil {
			errs = append(errs, created[i])
			continue
		}
		rep.Created = append(rep.Created, s.Name)
	}
	updates, err := updateTopics(ctx, adm, existing, details, &rep)
	errs = append(errs, err)
	for _, s := range existing {
		if changes, ok := updates[s.Name]; ok && len(changes) > 0 {
			rep.Updated = append(rep.Updated, TopicUpdate{Name: s.Name, Changes: changes})
		} else if ok {
			rep.Unchanged = append(rep.Unchanged, s.Name)
		}
	}
	return rep, errors.Join(errs...)
}

// createTopic creates one topic with its configs.
func createTopic(ctx context.Context, adm *kadm.Client, s TopicSpec) error {
	cfgs := make(map[string]*string, len(s.Configs))
	for k, v := range s.Configs {
		cfgs[k] = kadm.StringPtr(v)
	}
	resp, err := adm.CreateTopic(ctx, s.Partitions, s.ReplicationFactor, cfgs, s.Name)
	if err != nil && resp.ErrMessage != "" {
		err = fmt.Errorf("%w (%s)", err, resp.ErrMessage)
	}
	if err != nil {
		return fmt.Errorf("create topic %s (%d partitions, replication %d): %w",
			s.Name, s.Partitions, s.ReplicationFactor, err)
	}
	return nil
}

// updateTopics raises partitions and aligns configs of existing topics. It
// returns the changes made per topic; a topic that failed is absent.
func updateTopics(ctx context.Context, adm *kadm.Client, specs []TopicSpec, details kadm.TopicDetails, rep *ApplyReport) (map[string][]string, error) {
	out := make(map[string][]string, len(specs))
	if len(specs) == 0 {
		return out, nil
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	current, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		return out, fmt.Errorf("describe topic configs: %w", err)
	}
	var errs []error
	for _, s := range specs {
		changes, err := updateTopic(ctx, adm, s, details[s.Name], current, rep)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[s.Name] = changes
	}
	return out, errors.Join(errs...)
}

// updateTopic brings one existing topic in line with its spec.
func updateTopic(ctx context.Context, adm *kadm.Client, s TopicSpec, d kadm.TopicDetail, current kadm.ResourceConfigs, rep *ApplyReport) ([]string, error) {
	var changes []string
	have := int32(len(d.Partitions))
	switch {
	case have < s.Partitions:
		resp, err := adm.UpdatePartitions(ctx, int(s.Partitions), s.Name)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("topic %s: raise partitions %d -> %d: %w", s.Name, have, s.Partitions, err)
		}
		changes = append(changes, fmt.Sprintf("partitions %d -> %d", have, s.Partitions))
	case have > s.Partitions:
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s has %d partitions, more than the %d wanted; not lowered",
			s.Name, have, s.Partitions))
	}
	if rf := replicationFactor(d); s.ReplicationFactor > 0 && rf != int(s.ReplicationFactor) {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s has replication factor %d, not %d; reassign partitions to change it",
			s.Name, rf, s.ReplicationFactor))
	}

	rc, err := current.On(s.Name, nil)
	if err == nil {
		err = rc.Err
	}
	if err != nil {
		return nil, fmt.Errorf("topic %s: describe configs: %w", s.Name, err)
	}
	alters, cfgChanges := configAlters(s, rc)
	if len(alters) > 0 {
		resp, err := adm.AlterTopicConfigs(ctx, alters, s.Name)
		if err == nil {
			_, err = resp.On(s.Name, func(r *kadm.AlterConfigsResponse) error { return r.Err })
		}
		if err != nil {
			return nil, fmt.Errorf("topic %s: set configs %s: %w", s.Name, strings.Join(cfgChanges, ", "), err)
		}
		changes = append(changes, cfgChanges...)
	}
	return changes, nil
}

// configAlters returns the config changes that bring rc to s.
func configAlters(s TopicSpec, rc kadm.ResourceConfig) ([]kadm.AlterConfig, []string) {
	have := make(map[string]string, len(rc.Configs))
	for _, c := range rc.Configs {
		have[c.Key] = c.MaybeValue()
	}
	var alters []kadm.AlterConfig
	var changes []string
	for _, k := range sortedKeys(s.Configs) {
		want, cur := s.Configs[k], have[k]
		if configEqual(k, cur, want) {
			continue
		}
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: kadm.StringPtr(want)})
		changes = append(changes, fmt.Sprintf("%s %q -> %q", k, cur, want))
	}
	return alters, changes
}

// configEqual compares config values, ignoring list order in
// cleanup.policy.
func configEqual(key, a, b string) bool {
	if key == "cleanup.policy" {
		return normalizeCleanupPolicy(a) == normalizeCleanupPolicy(b)
	}
	return strings.TrimSpace(a) == strings.TrimSpace(b)
}

// replicationFactor is the replica count of the topic's first partition.
func replicationFactor(d kadm.TopicDetail) int {
	for _, p := range d.Partitions {
		return len(p.Replicas)
	}
	return 0
}
