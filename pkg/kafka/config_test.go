package kafka

import (
	"bytes"
	"flag"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestConfigFlags(t *testing.T) {
	tests := []struct {
		args    []string
		brokers []string
		id      string
	}{
		{nil, []string{"127.0.0.1:9092"}, "trawler"},
		{[]string{"-kafka", "k1:9092, k2:9093,,"}, []string{"k1:9092", "k2:9093"}, "trawler"},
		{[]string{"-kafka", "a:1", "-kafka", "b:2", "-kafka-client-id", "worker-3"}, []string{"b:2"}, "worker-3"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var c Config
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			c.RegisterFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Brokers, tc.brokers) || c.ClientID != tc.id {
				t.Errorf("got %v %q, want %v %q", c.Brokers, c.ClientID, tc.brokers, tc.id)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			if got := fs.Lookup("kafka").Value.String(); got != strings.Join(tc.brokers, ",") {
				t.Errorf("flag value String() = %q", got)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		brokers []string
		want    string
	}{
		{nil, "no brokers"},
		{[]string{"kafka"}, `broker 1 "kafka": want host:port`},
		{[]string{"ok:9092", ":9092"}, `broker 2 ":9092": empty host`},
		{[]string{"k:0"}, "not a number from 1 to 65535"},
		{[]string{"k:65536"}, "not a number from 1 to 65535"},
		{[]string{"k:http"}, "not a number from 1 to 65535"},
		{[]string{"[::1]:9092", "kafka-0.kafka:9092"}, ""},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.brokers, ","), func(t *testing.T) {
			err := (&Config{Brokers: tc.brokers}).Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tc.want)
			}
		})
	}
	if _, err := NewClient(Config{}); err == nil {
		t.Error("NewClient accepted a config without brokers")
	}
	if err := (&Config{Brokers: []string{"k:9092"}, SessionTimeout: -time.Second}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "session timeout -1s or rebalance timeout 0s is negative") {
		t.Errorf("negative session timeout: %v", err)
	}
}

func TestWithSlogMapsLevels(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	kl := kgoLogger{l: l}
	if got := kl.Level(); got != kgo.LogLevelWarn {
		t.Errorf("Level() = %v, want warn", got)
	}
	kl.Log(kgo.LogLevelInfo, "chatty", "k", 1)
	kl.Log(kgo.LogLevelWarn, "something odd", "broker", 1)
	out := buf.String()
	if strings.Contains(out, "chatty") || !strings.Contains(out, "level=WARN msg=\"something odd\" broker=1") {
		t.Errorf("log output %q", out)
	}
}
