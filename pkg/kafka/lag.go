package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// GroupLag is the records of topic that group has not committed: end
// offset minus committed offset, summed over the partitions. A partition
// without a commit (or a group that has none yet) counts from its start
// offset, so records removed by retention are not lag. A topic that does
// not exist has no lag (nothing to consume); a partition whose end offset
// cannot be listed for another reason is an error naming it.
func GroupLag(ctx context.Context, adm *kadm.Client, group, topic string) (int64, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("start offsets of %s: %w", topic, err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		committed, err = kadm.OffsetResponses{}, nil // nothing committed yet: everything is lag
	}
	if err != nil {
		return 0, fmt.Errorf("committed offsets of %s: %w", group, err)
	}
	var total int64
	var errs []error
	ends.Each(func(end kadm.ListedOffset) {
		if errors.Is(end.Err, kerr.UnknownTopicOrPartition) {
			return
		}
		if end.Err != nil {
			errs = append(errs, fmt.Errorf("end offset of %s/%d: %w", end.Topic, end.Partition, end.Err))
			return
		}
		at := int64(0)
		if s, ok := starts.Lookup(end.Topic, end.Partition); ok && s.Err == nil {
			at = s.Offset
		}
		if c, ok := committed.Lookup(end.Topic, end.Partition); ok && c.Err == nil && c.At >= 0 {
			at = c.At
		}
		total += max(end.Offset-at, 0)
	})
	return total, errors.Join(errs...)
}
