package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// forbiddenAddrs has at least one address in every refused range, in
// every form that reaches it.
var forbiddenAddrs = []string{
	"127.0.0.1", "127.1.2.3", "::1", // loopback
	"10.0.0.1", "172.16.5.4", "192.168.1.1", "fd12:3456::1", // private
	"169.254.10.20", "fe80::1", // link-local
	"100.64.0.1", "100.127.255.254", // carrier-grade NAT
	"169.254.169.254", "fd00:ec2::254", // cloud metadata, IPv4 and AWS IPv6
	"0.0.0.0", "::", "224.0.0.251", "ff02::fb", "255.255.255.255",
	"::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.1.1.1", // IPv4-mapped
	"::127.0.0.1",                          // IPv4-compatible
	"64:ff9b::a9fe:a9fe",                   // NAT64 of 169.254.169.254
	"64:ff9b:1::a00:1",                     // local-use NAT64
	"2002:a9fe:a9fe::1",                    // 6to4 of 169.254.169.254
	"2002:c0a8:101::",                      // 6to4 of 192.168.1.1
	"2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo, client 127.0.0.1
	"2001:0:a00:1:8000:63bf:3fff:fdd2",     // Teredo, server 10.0.0.1
}

// dialRecorder stands in for the network: it sees every address a socket
// would connect to (after the guard) and refuses them all, so no test
// depends on reaching the internet.
type dialRecorder struct {
	mu    sync.Mutex
	dials []string
}

var errNoTestNetwork = errors.New("test: no network beyond loopback")

func (d *dialRecorder) hook(_, address string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dials = append(d.dials, address)
	return errNoTestNetwork
}

func (d *dialRecorder) seen() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dials...)
}

func guardedFetcher(t *testing.T, r Resolver) (*Fetcher, *dialRecorder) {
	t.Helper()
	f := New(Config{SpoolDir: t.TempDir()}, r)
	rec := &dialRecorder{}
	f.dialHook = rec.hook
	t.Cleanup(func() { _ = f.Close() })
	return f, rec
}

func TestGuardAcceptance(t *testing.T) {
	srv := startServer(t, respond("HTTP/1.0 200 OK\r\n\r\nleak"))
	res := staticResolver{}
	for i, a := range forbiddenAddrs {
		res[fmt.Sprintf("h%d.test", i)] = []string{a}
		res[fmt.Sprintf("m%d.test", i)] = []string{a, "127.0.0.1"} // every answer forbidden
	}
	f, rec := guardedFetcher(t, res)
	for i, a := range forbiddenAddrs {
		if err := CheckAddress(netip.MustParseAddr(a)); !errors.Is(err, ErrAddressRefused) {
			t.Errorf("CheckAddress(%s) = %v", a, err)
		}
		lit := a
		if strings.Contains(a, ":") {
			lit = "[" + a + "]"
		}
		for _, host := range []string{lit, fmt.Sprintf("h%d.test", i), fmt.Sprintf("m%d.test", i)} {
			for _, scheme := range []string{"http", "https"} {
				u := scheme + "://" + host + ":" + srv.port() + "/"
				_, err := f.Fetch(context.Background(), Request{URL: u})
				var fe *Error
				if !errors.As(err, &fe) || fe.Status != StatusConnectFailed || fe.Retriable || !errors.Is(err, ErrAddressRefused) {
					t.Errorf("%s (%s): %v, want refused -2 not retriable", u, a, err)
				}
			}
		}
	}
	if d := rec.seen(); len(d) != 0 {
		t.Fatalf("sockets were about to connect to %v", d)
	}
	if n := srv.accepted.Load(); n != 0 {
		t.Fatalf("%d connections reached the loopback server", n)
	}
}

func TestPublicEmbeddingsAllowed(t *testing.T) {
	for _, a := range []string{
		"2001:0:4136:e378:8000:63bf:a2e8:fbfe", // Teredo, server and client public
		"64:ff9b::5db8:d822", "2002:5db8:d822::1", "::ffff:93.184.216.34", "2606:4700::1111",
	} {
		if err := CheckAddress(netip.MustParseAddr(a)); err != nil {
			t.Errorf("CheckAddress(%s) = %v, want allowed", a, err)
		}
	}
	err := CheckAddress(netip.MustParseAddr("2002:7f00:1::"))
	if err == nil || !strings.Contains(err.Error(), "carries 127.0.0.1") {
		t.Fatalf("6to4 refusal %v does not name the embedded address", err)
	}
}

// rebindingResolver answers public the first time and private after, as a
// DNS rebinding attacker's name server does.
type rebindingResolver struct {
	calls   atomic.Int32
	public  string
	private string
}

func (r *rebindingResolver) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	a := r.private
	if r.calls.Add(1) == 1 {
		a = r.public
	}
	return []net.IPAddr{{IP: net.ParseIP(a)}}, nil
}

func TestRebindingNeverConnects(t *testing.T) {
	srv := startServer(t, respond("HTTP/1.0 200 OK\r\n\r\nleak"))
	f, rec := guardedFetcher(t, &rebindingResolver{public: "93.184.216.34", private: "127.0.0.1"})
	u := "http://rebind.example:" + srv.port() + "/"
	_, err := f.Fetch(context.Background(), Request{URL: u})
	if fe := fetchErr(t, err, StatusConnectFailed, true); !errors.Is(fe, errNoTestNetwork) {
		t.Fatalf("first fetch %v, want the public dial attempted", fe)
	}
	_, err = f.Fetch(context.Background(), Request{URL: u})
	if fe := fetchErr(t, err, StatusConnectFailed, false); !errors.Is(fe, ErrAddressRefused) {
		t.Fatalf("second fetch %v, want refusal", fe)
	}
	if d := rec.seen(); len(d) != 1 || d[0] != "93.184.216.34:"+srv.port() {
		t.Fatalf("dials %v, want only the public address", d)
	}
	if n := srv.accepted.Load(); n != 0 {
		t.Fatalf("%d connections reached the loopback server", n)
	}
}

func TestMixedAnswerDialsOnlyPublic(t *testing.T) {
	srv := startServer(t, respond("HTTP/1.0 200 OK\r\n\r\nleak"))
	f, rec := guardedFetcher(t, staticResolver{"mixed.example": {"127.0.0.1", "93.184.216.34", "::ffff:10.0.0.1", "2606:4700::1111"}})
	_, err := f.Fetch(context.Background(), Request{URL: "http://mixed.example:" + srv.port() + "/"})
	fetchErr(t, err, StatusConnectFailed, true)
	want := []string{"93.184.216.34:" + srv.port(), "[2606:4700::1111]:" + srv.port()}
	if d := rec.seen(); strings.Join(d, " ") != strings.Join(want, " ") {
		t.Fatalf("dials %v, want %v", d, want)
	}
	if n := srv.accepted.Load(); n != 0 {
		t.Fatalf("%d connections reached the loopback server", n)
	}
}

// TestRedirectTargetsGuarded fetches a public page (through a proxy, the
// only way a test reaches "public" content) that redirects to private
// places; fetching each Location, as the worker does, is refused.
func TestRedirectTargetsGuarded(t *testing.T) {
	private := startServer(t, respond("HTTP/1.0 200 OK\r\n\r\nleak"))
	locations := []string{
		"http://127.0.0.1:" + private.port() + "/admin",
		"http://internal.test:" + private.port() + "/",
		"http://rebind.test:" + private.port() + "/",
		"http://[::ffff:127.0.0.1]:" + private.port() + "/",
		"http://169.254.169.254/latest/meta-data/",
	}
	var resp strings.Builder
	resp.WriteString("HTTP/1.0 302 Found\r\n")
	for _, l := range locations {
		resp.WriteString("Location: " + l + "\r\n")
	}
	resp.WriteString("\r\n")
	public := startServer(t, respond(resp.String()))
	log := &proxyLog{}
	px := httpProxy(t, "127.0.0.1:"+public.port(), false, log)
	f := proxiedFetcher(t, "http://127.0.0.1:"+px.port())
	r, err := f.Fetch(context.Background(), Request{URL: "http://site.test/start"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	got := r.Header.Values("Location")
	if len(got) != len(locations) {
		t.Fatalf("locations %v", got)
	}
	for _, l := range got {
		_, err := f.Fetch(context.Background(), Request{URL: l})
		if fe := fetchErr(t, err, StatusConnectFailed, false); !errors.Is(fe, ErrAddressRefused) {
			t.Fatalf("%s: %v", l, fe)
		}
	}
	if n := private.accepted.Load(); n != 0 {
		t.Fatalf("%d connections reached the private server", n)
	}
	if n := px.accepted.Load(); n != 1 {
		t.Fatalf("proxy saw %d connections, want only the first fetch", n)
	}
}
