package kafka

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A group's lag counts every record before it commits anything, then what
// is left after each commit, never below zero per partition.
func TestGroupLag(t *testing.T) {
	cfg := newCluster(t, 2, "t")
	ctx := testContext(t, 30*time.Second)
	cl := newTestClient(t, cfg, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 5 {
		r := &kgo.Record{Topic: "t", Partition: int32(i % 2), Value: []byte("x")}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	lag, err := GroupLag(ctx, adm, "g", "t")
	if err != nil || lag != 5 {
		t.Fatalf("before any commit: lag %d, %v; want 5", lag, err)
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "t", Partition: 0, At: 2, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(ctx, "g", offsets); err != nil || resp.Error() != nil {
		t.Fatal(err, resp.Error())
	}
	if lag, err = GroupLag(ctx, adm, "g", "t"); err != nil || lag != 3 {
		t.Fatalf("after committing 2 of partition 0: lag %d, %v; want 3", lag, err)
	}
	offsets.Add(kadm.Offset{Topic: "t", Partition: 1, At: 2, LeaderEpoch: -1})
	offsets.Add(kadm.Offset{Topic: "t", Partition: 0, At: 3, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(ctx, "g", offsets); err != nil || resp.Error() != nil {
		t.Fatal(err, resp.Error())
	}
	if lag, err = GroupLag(ctx, adm, "g", "t"); err != nil || lag != 0 {
		t.Fatalf("after committing everything: lag %d, %v; want 0", lag, err)
	}
	// A topic nobody created has nothing to consume.
	if lag, err = GroupLag(ctx, adm, "g", "absent"); err != nil || lag != 0 {
		t.Fatalf("absent topic: lag %d, %v; want 0 and no error", lag, err)
	}
}
