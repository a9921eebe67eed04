package frontier

import (
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

func TestDelay(t *testing.T) {
	def := profile.Politeness{DelayFactor: 5, MinDelayMs: 3000, MaxDelayMs: 30000, RespectCrawlDelayUpToSeconds: 300}
	tests := []struct {
		name       string
		p          profile.Politeness
		fetch, cd  time.Duration
		bytes, cap int64
		want       time.Duration
	}{
		{"fast fetch clamps to min", def, 100 * time.Millisecond, 0, 0, 0, 3 * time.Second},
		{"factor x duration", def, 2 * time.Second, 0, 0, 0, 10 * time.Second},
		{"slow fetch clamps to max", def, time.Minute, 0, 0, 0, 30 * time.Second},
		{"crawl-delay raises", def, time.Second, 60 * time.Second, 0, 0, time.Minute},
		{"crawl-delay below delay is ignored", def, 2 * time.Second, time.Second, 0, 0, 10 * time.Second},
		{"crawl-delay respected up to the cap", def, time.Second, time.Hour, 0, 0, 300 * time.Second},
		{"crawl-delay not respected", profile.Politeness{DelayFactor: 5, MinDelayMs: 3000, MaxDelayMs: 30000}, time.Second, time.Hour, 0, 0, 5 * time.Second},
		{"zero factor", profile.Politeness{MinDelayMs: 0, MaxDelayMs: 10}, time.Second, 0, 0, 0, 0},
		{"bandwidth cap", def, time.Second, 0, 10 << 20, 100, 102400 * time.Millisecond},
		{"bandwidth cap below delay", def, time.Second, 0, 1024, 100, 5 * time.Second},
		{"no cap with zero", def, time.Second, 0, 10 << 20, 0, 5 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Delay(tc.p, tc.fetch, tc.cd, tc.bytes, tc.cap); got != tc.want {
				t.Fatalf("Delay = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLevel(t *testing.T) {
	l := func(seed, force bool, path string) messages.Launch {
		m := messages.Launch{URL: "http://a/", IsSeed: seed, ForceFetch: force}
		if path != "" {
			m.Hop, m.ParentURLMetadata.PathFromSeed = path[len(path)-1:], path[:len(path)-1]
		}
		return m
	}
	tests := []struct {
		launch messages.Launch
		pref   int
		want   int
	}{
		{l(true, false, ""), -1, LevelForced},
		{l(false, true, "LLLL"), -1, LevelForced},
		{l(false, false, "L"), -1, LevelNormal},
		{l(false, false, "L"), 1, LevelPreferred},
		{l(false, false, "LL"), 1, LevelNormal},
		{l(false, false, "LLLR"), 1, LevelPreferred},
		{l(false, false, "LLLR"), -1, LevelNormal},
		{l(false, false, "E"), 0, LevelNormal},
	}
	for _, tc := range tests {
		if got := Level(tc.launch, tc.pref); got != tc.want {
			t.Errorf("Level(%q seed=%v force=%v, %d) = %d, want %d", tc.launch.HopPath(), tc.launch.IsSeed, tc.launch.ForceFetch, tc.pref, got, tc.want)
		}
	}
}

func TestDecide(t *testing.T) {
	p := PolicyOf(profile.Default())
	p.Frontier.MaxRetries = 3
	server := p
	server.Frontier.RetryServerErrors = true
	tests := []struct {
		name    string
		p       Policy
		status  int
		retries int
		want    Decision
	}{
		{"success", p, 200, 0, Decision{Status: 200, Attempts: 1}},
		{"success after retries", p, 200, 2, Decision{Status: 200, Attempts: 3}},
		{"connect failed retried", p, -2, 0, Decision{Retry: true, Status: -2, Attempts: 1}},
		{"dns failed retried", p, -1, 2, Decision{Retry: true, Status: -1, Attempts: 3}},
		{"timeout exhausted", p, -4, 3, Decision{Status: StatusRetriesExhausted, Attempts: 4}},
		{"lookup failure is final", p, -6, 0, Decision{Status: -6, Attempts: 1}},
		{"503 final by default", p, 503, 0, Decision{Status: 503, Attempts: 1}},
		{"503 retried when asked", server, 503, 0, Decision{Retry: true, Status: 503, Attempts: 1}},
		{"503 exhausted", server, 503, 3, Decision{Status: StatusRetriesExhausted, Attempts: 4}},
		{"404 never retried", server, 404, 0, Decision{Status: 404, Attempts: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Decide(tc.status, tc.retries); got != tc.want {
				t.Fatalf("Decide = %+v, want %+v", got, tc.want)
			}
		})
	}
	if a := (Decision{Attempts: 1}).Annotation(); a != "" {
		t.Fatalf("first attempt annotated %q", a)
	}
	if a := (Decision{Attempts: 4}).Annotation(); a != "4t" {
		t.Fatalf("annotation %q, want 4t", a)
	}
}

func TestDecidePrerequisite(t *testing.T) {
	p := PolicyOf(profile.Default())
	p.Frontier.MaxRetries = 2
	tests := []struct {
		status, retries int
		retriable       bool
		want            Decision
	}{
		{-61, 0, true, Decision{Retry: true, Status: -61, Attempts: 1}},
		{-61, 2, true, Decision{Status: -61, Attempts: 3}},
		{-6, 0, false, Decision{Status: -6, Attempts: 1}},
		{-6, 1, true, Decision{Retry: true, Status: -6, Attempts: 2}},
	}
	for _, tc := range tests {
		if got := p.DecidePrerequisite(tc.status, tc.retries, tc.retriable); got != tc.want {
			t.Errorf("DecidePrerequisite(%d, %d, %v) = %+v, want %+v", tc.status, tc.retries, tc.retriable, got, tc.want)
		}
	}
}

func TestOverQuota(t *testing.T) {
	none := PolicyOf(profile.Default()).Quotas
	tests := []struct {
		name string
		set  func(*profile.Quotas)
		u    Usages
		want string
	}{
		{"no quotas", func(*profile.Quotas) {}, Usages{Server: Usage{1e6, 1e9, 1e6, 1e9}}, ""},
		{"server successes", func(q *profile.Quotas) { q.ServerMaxFetchSuccesses = 10 }, Usages{Server: Usage{FetchSuccesses: 10}}, "serverMaxFetchSuccesses"},
		{"under", func(q *profile.Quotas) { q.ServerMaxFetchSuccesses = 10 }, Usages{Server: Usage{FetchSuccesses: 9}}, ""},
		{"success kb rounds down", func(q *profile.Quotas) { q.HostMaxSuccessKb = 2 }, Usages{Host: Usage{SuccessBytes: 2047}}, ""},
		{"success kb", func(q *profile.Quotas) { q.HostMaxSuccessKb = 2 }, Usages{Host: Usage{SuccessBytes: 2048}}, "hostMaxSuccessKb"},
		{"zero blocks all", func(q *profile.Quotas) { q.SourceMaxFetchResponses = 0 }, Usages{}, "sourceMaxFetchResponses"},
		{"all kb", func(q *profile.Quotas) { q.SourceMaxAllKb = 1 }, Usages{Source: Usage{AllBytes: 1024}}, "sourceMaxAllKb"},
		{"server before host", func(q *profile.Quotas) { q.ServerMaxAllKb, q.HostMaxFetchSuccesses = 1, 1 },
			Usages{Server: Usage{AllBytes: 4096}, Host: Usage{FetchSuccesses: 5}}, "serverMaxAllKb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Quotas: none}
			tc.set(&p.Quotas)
			got, over := p.OverQuota(tc.u)
			if got != tc.want || over != (tc.want != "") {
				t.Fatalf("OverQuota = %q %v, want %q", got, over, tc.want)
			}
		})
	}
}

func TestLimitReached(t *testing.T) {
	tests := []struct {
		l       profile.Limits
		t       Totals
		elapsed time.Duration
		want    string
	}{
		{profile.Limits{}, Totals{Downloaded: 1e9, Bytes: 1e12}, 1e6 * time.Hour, ""},
		{profile.Limits{MaxDocumentsDownload: 10}, Totals{URIs: 20, Downloaded: 9}, 0, ""},
		{profile.Limits{MaxDocumentsDownload: 10}, Totals{Downloaded: 10}, 0, LimitDocuments},
		{profile.Limits{MaxBytesDownload: 100}, Totals{Bytes: 100}, 0, LimitBytes},
		{profile.Limits{MaxTimeSeconds: 60}, Totals{}, 59 * time.Second, ""},
		{profile.Limits{MaxTimeSeconds: 60}, Totals{}, time.Minute, LimitTime},
		{profile.Limits{MaxNovelUrls: 5}, Totals{Downloaded: 50, Novel: 4}, 0, ""},
		{profile.Limits{MaxNovelUrls: 5}, Totals{Downloaded: 50, Novel: 5}, 0, LimitNovelURIs},
		{profile.Limits{MaxNovelBytes: 1000}, Totals{Bytes: 5000, NovelBytes: 999}, 0, ""},
		{profile.Limits{MaxNovelBytes: 1000}, Totals{Bytes: 5000, NovelBytes: 1000}, 0, LimitNovelSize},
		// Heritrix's order: bytes, novel bytes, documents, novel URLs, time.
		{profile.Limits{MaxNovelUrls: 1, MaxNovelBytes: 1}, Totals{Novel: 1, NovelBytes: 1}, 0, LimitNovelSize},
		{profile.Limits{MaxNovelUrls: 1, MaxDocumentsDownload: 1}, Totals{Downloaded: 1, Novel: 1}, 0, LimitDocuments},
	}
	for i, tc := range tests {
		if got := LimitReached(tc.l, tc.t, tc.elapsed); got != tc.want {
			t.Errorf("case %d: LimitReached = %q, want %q", i, got, tc.want)
		}
	}
}

func TestVerdictString(t *testing.T) {
	for v, want := range map[Verdict]string{Queued: "queued", Admitted: "admitted", Seen: "seen", Reprioritised: "reprioritised", Invalid: "invalid", 9: "verdict(9)"} {
		if v.String() != want {
			t.Errorf("%d: %q, want %q", int(v), v.String(), want)
		}
	}
}
