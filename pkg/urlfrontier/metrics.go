package urlfrontier

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// metrics count the service's calls and what went through them. A nil
// *metrics counts nothing.
type metrics struct {
	calls   *prometheus.CounterVec // method, code
	put     *prometheus.CounterVec // status: ok, skipped, fail
	refused *prometheus.CounterVec // code: InvalidArgument, Unimplemented
	served  prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_urlfrontier_calls_total",
			Help: "URLFrontier gRPC calls answered, by method and status code (a stream counts once, when it ends).",
		}, []string{"method", "code"}),
		put: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_urlfrontier_put_urls_total",
			Help: "URLs put (PutURLs, PutDiscovered) by ack status: ok (taken), skipped (known already, or refused), fail (send again).",
		}, []string{"status"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_urlfrontier_refused_items_total",
			Help: "Items of a put stream refused as bad input (InvalidArgument) or asking what Trawler cannot do (Unimplemented); acked skipped.",
		}, []string{"code"}),
		served: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_urlfrontier_served_urls_total",
			Help: "URLs handed out by GetURLs under a lease.",
		}),
	}
	for _, c := range []prometheus.Collector{m.calls, m.put, m.refused, m.served} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("urlfrontier metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) call(method string, err error) {
	if m != nil {
		m.calls.WithLabelValues(method, status.Code(err).String()).Inc()
	}
}

func (m *metrics) putStatus(st string, n int) {
	if m != nil {
		m.put.WithLabelValues(st).Add(float64(n))
	}
}

func (m *metrics) refuse(err error) {
	if m != nil {
		m.refused.WithLabelValues(status.Code(err).String()).Inc()
	}
}

func (m *metrics) serve(n int) {
	if m != nil {
		m.served.Add(float64(n))
	}
}

// The interceptors count every call, those the token check refuses too.
func (m *metrics) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	m.call(info.FullMethod, err)
	return resp, err
}

func (m *metrics) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	err := h(srv, ss)
	m.call(info.FullMethod, err)
	return err
}
