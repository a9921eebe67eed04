package kafka

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestConsumerCountersExistAtZero: a consumer that has consumed nothing
// already exports its per-topic counters at zero, so the dashboards' DLQ
// panel and the DLQ alert read 0 on a healthy crawl, not "No data".
func TestConsumerCountersExistAtZero(t *testing.T) {
	tests := []struct {
		name    string
		dlq     string
		present []string // metrics with one series per topic, at 0
		absent  []string // metrics with no series
	}{
		{"with a dead-letter topic", "t.dlq",
			[]string{"trawler_kafka_consumer_records_total", "trawler_kafka_consumer_dlq_records_total"},
			[]string{"trawler_kafka_consumer_dropped_records_total"}},
		{"without one", "",
			[]string{"trawler_kafka_consumer_records_total", "trawler_kafka_consumer_dropped_records_total"},
			[]string{"trawler_kafka_consumer_dlq_records_total"}},
	}
	topics := []string{"t.a", "t.b"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			_, err := NewConsumer(Config{Brokers: []string{"127.0.0.1:1"}, ClientID: "test"}, ConsumerOptions[event]{
				Group: "g", Topics: topics, DLQTopic: tc.dlq, Decode: decodeEvent,
				Handle: (&collector{}).handle, Registerer: reg,
			})
			if err != nil {
				t.Fatal(err)
			}
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]map[string]float64{} // name → topic → value
			for _, mf := range mfs {
				for _, m := range mf.GetMetric() {
					for _, l := range m.GetLabel() {
						if l.GetName() == "topic" {
							if got[mf.GetName()] == nil {
								got[mf.GetName()] = map[string]float64{}
							}
							got[mf.GetName()][l.GetValue()] = m.GetCounter().GetValue()
						}
					}
				}
			}
			for _, name := range tc.present {
				for _, topic := range topics {
					v, ok := got[name][topic]
					if !ok || v != 0 {
						t.Errorf("%s{topic=%q} = %v (present %v), want 0", name, topic, v, ok)
					}
				}
			}
			for _, name := range tc.absent {
				if len(got[name]) > 0 {
					t.Errorf("%s has series %v, want none", name, got[name])
				}
			}
		})
	}
}
