// Package urlfrontier serves Trawler's frontier (pkg/frontier) over the
// URLFrontier API v2 (crawler-commons url-frontier), the gRPC frontier
// API StormCrawler speaks, so an outside crawler can put discovered URLs
// into a Trawler frontier and lease due ones from it.
//
// The mapping (docs/frontier.md, "URLFrontier"): a URLFrontier queue is
// Trawler's host queue (the URL's authority, hostkey.Authority); a crawl
// id is a frontier of its own, named <base> for the default crawl and
// <base>+<crawl id> for the others, so crawls share no key; GetURLs
// claims under leases of delay_requestable seconds; a KnownURLItem
// completes the URL's lease, and its refetchable_from_date puts it in the
// crawl's schedule (a sorted set beside the frontier) from which it is
// queued again when due. What Trawler's frontier cannot do (a queue key
// other than the host key, PurgeURLs) is refused, not imitated.
package urlfrontier

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	pb "github.com/trawler-crawl/trawler/pkg/urlfrontier/urlfrontierpb"
)

// DefaultCrawl is the crawl id of a request that names none, as in the
// reference service.
const DefaultCrawl = "DEFAULT"

// DefaultLease is the lease of a GetURLs that leaves delay_requestable at
// 0, the reference service's 30 s.
const DefaultLease = 30 * time.Second

// Config configures a Server.
type Config struct {
	// Frontier is the base frontier name: the default crawl's frontier;
	// crawl id X is frontier <Frontier>+X.
	Frontier string
	// Options are the frontier options every crawl's frontier is opened
	// with (shards, seen filter); Now is taken from Config.Now.
	Options frontier.Options
	// Policy is the base policy of admissions and completions; the
	// service sets the politeness delay per queue, one URI in flight per
	// queue and a recrawl interval that never ends (a known URL comes
	// back only through its refetchable date).
	Policy frontier.Policy
	// Token is the bearer token every call must carry in its
	// "authorization" metadata; empty only with Insecure.
	Token string
	// Insecure serves without a token (a loopback listener only: the
	// command refuses any other address).
	Insecure bool
	// Node is this node's address, for ListNodes.
	Node string
	// Logger and Level: SetLogLevel changes Level.
	Logger *slog.Logger
	Level  *slog.LevelVar
	// Now replaces time.Now, for tests.
	Now func() time.Time
	// Registerer receives the service's metrics (trawler_urlfrontier_*);
	// nil registers none.
	Registerer prometheus.Registerer
}

// Server implements the URLFrontier service over Trawler's frontier. It
// is safe for concurrent use.
type Server struct {
	pb.UnimplementedURLFrontierServer
	rdb    redis.UniversalClient
	cfg    Config
	log    *slog.Logger
	m      *metrics
	active atomic.Bool

	mu     sync.Mutex
	crawls map[string]*frontier.Frontier
}

// New returns a Server on rdb.
func New(rdb redis.UniversalClient, cfg Config) (*Server, error) {
	if cfg.Frontier == "" || !validName.MatchString(cfg.Frontier) {
		return nil, fmt.Errorf("urlfrontier: frontier name %q: want letters, digits, '.', '_' or '-'", cfg.Frontier)
	}
	if cfg.Token == "" && !cfg.Insecure {
		return nil, errors.New("urlfrontier: an admin token is required (or an insecure loopback listener)")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Level == nil {
		cfg.Level = new(slog.LevelVar)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Options.Now = cfg.Now
	cfg.Options.Logger = cfg.Logger
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	s := &Server{rdb: rdb, cfg: cfg, log: cfg.Logger, m: m, crawls: map[string]*frontier.Frontier{}}
	s.active.Store(true)
	return s, nil
}

// stopGrace is how long Serve waits for calls in progress when its
// context ends; a client's PutURLs stream may stay open indefinitely, so
// the rest are then cut.
const stopGrace = 10 * time.Second

// Serve answers on lis until ctx ends, then stops: calls in progress get
// stopGrace to finish.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	g := grpc.NewServer(s.ServerOptions()...)
	s.Register(g)
	errc := make(chan error, 1)
	go func() { errc <- g.Serve(lis) }()
	select {
	case err := <-errc:
		return fmt.Errorf("urlfrontier: serve %s: %w", lis.Addr(), err)
	case <-ctx.Done():
	}
	t := time.AfterFunc(stopGrace, g.Stop)
	defer t.Stop()
	g.GracefulStop()
	if err := <-errc; err != nil {
		return fmt.Errorf("urlfrontier: serve %s: %w", lis.Addr(), err)
	}
	return nil
}

// Register adds the service to g.
func (s *Server) Register(g *grpc.Server) { pb.RegisterURLFrontierServer(g, s) }

// ServerOptions are the interceptors that count calls (refused ones
// too) and check the token.
func (s *Server) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(s.m.unary, func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := s.authorize(ctx); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(s.m.stream, func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := s.authorize(ss.Context()); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
}

// authorize checks "authorization: Bearer <token>" in constant time, as
// the admin API does.
func (s *Server) authorize(ctx context.Context) error {
	if s.cfg.Insecure {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		scheme, cred, ok := strings.Cut(v, " ")
		if ok && strings.EqualFold(scheme, "Bearer") &&
			subtle.ConstantTimeCompare([]byte(strings.TrimSpace(cred)), []byte(s.cfg.Token)) == 1 {
			return nil
		}
	}
	return status.Error(codes.Unauthenticated, "send metadata authorization: Bearer <admin token>")
}

// validName: crawl ids and the base name go into Redis hash tags and SCAN
// patterns, so they keep to characters that mean nothing there.
var validName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

// crawlID normalises a request's crawl id.
func crawlID(id string) (string, error) {
	if id == "" {
		return DefaultCrawl, nil
	}
	if !validName.MatchString(id) {
		return "", status.Errorf(codes.InvalidArgument, "crawl id %q: want 1 to 100 letters, digits, '.', '_' or '-'", id)
	}
	return id, nil
}

// frontierName is the frontier holding crawl id.
func (s *Server) frontierName(id string) string {
	if id == DefaultCrawl {
		return s.cfg.Frontier
	}
	return s.cfg.Frontier + "+" + id
}

// crawlsKey is the set of crawl ids; its hash tag is no crawl's.
func (s *Server) crawlsKey() string { return "{" + s.cfg.Frontier + ".crawls}:urlfrontier" }

// crawl opens crawl id's frontier; create records the id (a put), else
// an unknown crawl is NotFound.
func (s *Server) crawl(ctx context.Context, rawID string, create bool) (*crawl, error) {
	id, err := crawlID(rawID)
	if err != nil {
		return nil, err
	}
	if create {
		if err := s.rdb.SAdd(ctx, s.crawlsKey(), id).Err(); err != nil {
			return nil, status.Errorf(codes.Unavailable, "record crawl %s: %v", id, err)
		}
	} else {
		ok, err := s.rdb.SIsMember(ctx, s.crawlsKey(), id).Result()
		if err != nil {
			return nil, status.Errorf(codes.Unavailable, "crawl %s: %v", id, err)
		}
		if !ok {
			return nil, status.Errorf(codes.NotFound, "crawl %q is unknown", id)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.crawls[id]
	if !ok {
		f, err = frontier.New(s.rdb, s.frontierName(id), s.cfg.Options)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "crawl %s: %v", id, err)
		}
		s.crawls[id] = f
	}
	return &crawl{id: id, f: f, s: s}, nil
}

// crawlIDs lists the recorded crawl ids.
func (s *Server) crawlIDs(ctx context.Context) ([]string, error) {
	ids, err := s.rdb.SMembers(ctx, s.crawlsKey()).Result()
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "list crawls: %v", err)
	}
	return ids, nil
}

// unavailable wraps a Redis or frontier failure.
func unavailable(what string, err error) error {
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		return err
	}
	return status.Errorf(codes.Unavailable, "%s: %v", what, err)
}

func slogLevel(l int) slog.Level { return slog.Level(l) }
