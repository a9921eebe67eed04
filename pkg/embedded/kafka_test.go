package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func startKafka(t *testing.T, o KafkaOptions) *Kafka {
	t.Helper()
	k, err := StartKafka(context.Background(), o)
	if err != nil {
		t.Fatalf("StartKafka: %v", err)
	}
	t.Cleanup(func() { _ = k.Close() })
	return k
}

func newClient(t *testing.T, k *Kafka, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(k.Brokers()...)}, opts...)...)
	if err != nil {
		t.Fatalf("kgo.NewClient: %v", err)
	}
	return cl
}

func TestKafkaPersistsAcrossRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "kafka")
	const topic, group = "fc.crawled", "cdxwriter"

	k := startKafka(t, KafkaOptions{DataDir: dir})
	cl := newClient(t, k)
	adm := kadm.NewClient(cl)
	retention := "2592000000"
	if _, err := adm.CreateTopic(ctx, 3, 1, map[string]*string{"retention.ms": &retention}, topic); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	var want []string
	for i := range 30 {
		v := fmt.Sprintf("record-%02d", i)
		want = append(want, v)
		r := &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("host-%d", i%7)), Value: []byte(v)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	committed := kadm.Offsets{}
	for p, at := range []int64{1, 2, 3} {
		committed.Add(kadm.Offset{Topic: topic, Partition: int32(p), At: at, LeaderEpoch: -1})
	}
	if err := adm.CommitAllOffsets(ctx, group, committed); err != nil {
		t.Fatalf("commit offsets: %v", err)
	}
	cl.Close()
	if err := k.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	k2 := startKafka(t, KafkaOptions{DataDir: dir})
	cl2 := newClient(t, k2, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl2.Close()
	adm2 := kadm.NewClient(cl2)

	topics, err := adm2.ListTopics(ctx, topic)
	if err != nil || topics[topic].Err != nil {
		t.Fatalf("list topics after restart: %v %v", err, topics[topic].Err)
	}
	if n := len(topics[topic].Partitions); n != 3 {
		t.Errorf("partitions after restart = %d, want 3", n)
	}
	cfgs, err := adm2.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatalf("describe configs: %v", err)
	}
	rc, _ := cfgs.On(topic, nil)
	if got := configValue(rc, "retention.ms"); got != retention {
		t.Errorf("retention.ms after restart = %q, want %q", got, retention)
	}

	offsets, err := adm2.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets: %v", err)
	}
	for p, at := range []int64{1, 2, 3} {
		o, ok := offsets.Lookup(topic, int32(p))
		if !ok || o.Err != nil || o.At != at {
			t.Errorf("committed offset p%d after restart = %+v (found %v), want %d", p, o, ok, at)
		}
	}

	var got []string
	for len(got) < len(want) && ctx.Err() == nil {
		fs := cl2.PollFetches(ctx)
		fs.EachError(func(tp string, p int32, err error) { t.Errorf("fetch %s/%d: %v", tp, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("records after restart = %v, want %v", got, want)
	}
}

func configValue(rc kadm.ResourceConfig, key string) string {
	for _, c := range rc.Configs {
		if c.Key == key {
			return c.MaybeValue()
		}
	}
	return ""
}

func TestKafkaFixedAddr(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	k := startKafka(t, KafkaOptions{Addr: addr, DefaultPartitions: 4})
	if got := k.Brokers(); !slices.Equal(got, []string{addr}) {
		t.Fatalf("Brokers() = %v, want [%s]", got, addr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl := newClient(t, k)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, -1, -1, nil, "defaulted"); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	td, err := adm.ListTopics(ctx, "defaulted")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(td["defaulted"].Partitions); n != 4 {
		t.Errorf("partitions = %d, want DefaultPartitions 4", n)
	}
	// Auto creation is off: producing to an unknown topic must fail.
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	defer pcancel()
	err = cl.ProduceSync(pctx, &kgo.Record{Topic: "no.such.topic", Value: []byte("x")}).FirstErr()
	if err == nil {
		t.Error("produce to unknown topic succeeded; auto topic creation should be off")
	}
}

func TestKafkaDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	startKafka(t, KafkaOptions{DataDir: dir})
	_, err := StartKafka(context.Background(), KafkaOptions{DataDir: dir})
	if !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("second StartKafka on %s: err = %v, want ErrDataDirInUse", dir, err)
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
		t.Errorf("error %q should name the directory and the holder pid", err)
	}
}

func TestKafkaStartErrors(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "plain-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(tmp, "corrupt")
	if err := os.MkdirAll(corrupt, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corrupt, "meta.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name string
		ctx  context.Context
		o    KafkaOptions
		want string
	}{
		{"data dir is a file", context.Background(), KafkaOptions{DataDir: file}, "create data dir " + file},
		{"corrupt state", context.Background(), KafkaOptions{DataDir: corrupt}, "meta.json"},
		{"routable address", context.Background(), KafkaOptions{Addr: "0.0.0.0:0"}, "loopback"},
		{"no port", context.Background(), KafkaOptions{Addr: "127.0.0.1"}, "missing port"},
		{"bad port", context.Background(), KafkaOptions{Addr: "127.0.0.1:http2x"}, "bad port"},
		{"negative partitions", context.Background(), KafkaOptions{DefaultPartitions: -1}, "must not be negative"},
		{"canceled context", canceled, KafkaOptions{}, "context canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := StartKafka(tc.ctx, tc.o)
			if err == nil {
				_ = k.Close()
				t.Fatalf("StartKafka(%+v) succeeded, want error containing %q", tc.o, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
	// A failed start must release the lock.
	if err := os.Remove(filepath.Join(corrupt, "meta.json")); err != nil {
		t.Fatal(err)
	}
	startKafka(t, KafkaOptions{DataDir: corrupt})
}

// TestKafkaGivenListener: a listener bound before the start (standalone
// binds its ports first) is the one the broker serves on and advertises.
func TestKafkaGivenListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	k := startKafka(t, KafkaOptions{Listener: ln, Addr: "127.0.0.1:1"})
	if got, want := k.Brokers(), []string{ln.Addr().String()}; !slices.Equal(got, want) {
		t.Fatalf("Brokers() = %v, want %v", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl := newClient(t, k)
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, "given"); err != nil {
		t.Fatalf("create topic over the given listener: %v", err)
	}
}

func TestKafkaPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	_, err = StartKafka(context.Background(), KafkaOptions{DataDir: dir, Addr: ln.Addr().String()})
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("err = %v, want address already in use", err)
	}
	startKafka(t, KafkaOptions{DataDir: dir}) // lock released after the failure
}

func TestKafkaCloseReportsSaveFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kafka")
	k, err := StartKafka(context.Background(), KafkaOptions{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// The data directory vanishes under the broker and a file takes its
	// place, so the state cannot be written on Close.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = k.Close()
	if err == nil || !strings.Contains(err.Error(), "saving state to "+dir) {
		t.Fatalf("Close = %v, want a save error naming %s", err, dir)
	}
	if again := k.Close(); again == nil || again.Error() != err.Error() {
		t.Errorf("second Close = %v, want the same error", again)
	}
}
