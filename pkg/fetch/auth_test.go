package fetch

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

const testPassword = "pa:ss\"word"

// authParamRE picks name=value pairs out of a Digest Authorization value;
// it is deliberately independent of the fetcher's challenge parser.
var authParamRE = regexp.MustCompile(`([A-Za-z0-9-]+)=("(?:[^"\\]|\\.)*"|[^,\s]+)`)

func authParams(s string) map[string]string {
	out := map[string]string{}
	for _, m := range authParamRE.FindAllStringSubmatch(s, -1) {
		v := m[2]
		if strings.HasPrefix(v, `"`) {
			v = strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(v[1 : len(v)-1])
		}
		out[m[1]] = v
	}
	return out
}

// digestServer describes what the test server demands (RFC 7616 section
// 3.4): it recomputes the response from the password itself.
type digestServer struct {
	realm, nonce, opaque, alg, login, password, method, uri string
	qop, userhash                                           bool
}

func (d digestServer) verify(authz string) error {
	rest, ok := strings.CutPrefix(authz, "Digest ")
	if !ok {
		return fmt.Errorf("not Digest: %q", authz)
	}
	p := authParams(rest)
	newHash := map[string]func() hash.Hash{"": md5.New, "MD5": md5.New, "MD5-sess": md5.New,
		"SHA-256": sha256.New, "SHA-256-sess": sha256.New}[d.alg]
	h := func(s string) string {
		x := newHash()
		x.Write([]byte(s))
		return hex.EncodeToString(x.Sum(nil))
	}
	user := d.login
	if d.userhash {
		user = h(d.login + ":" + d.realm)
	}
	for k, want := range map[string]string{"username": user, "realm": d.realm, "nonce": d.nonce,
		"uri": d.uri, "opaque": d.opaque, "algorithm": d.alg} {
		if p[k] != want {
			return fmt.Errorf("%s = %q, want %q", k, p[k], want)
		}
	}
	ha1 := h(d.login + ":" + d.realm + ":" + d.password)
	if strings.HasSuffix(d.alg, "-sess") {
		ha1 = h(ha1 + ":" + d.nonce + ":" + p["cnonce"])
	}
	ha2 := h(d.method + ":" + d.uri)
	want := h(ha1 + ":" + d.nonce + ":" + ha2)
	if d.qop {
		if p["qop"] != "auth" || p["nc"] != "00000001" || len(p["cnonce"]) < 16 {
			return fmt.Errorf("qop/nc/cnonce %q/%q/%q", p["qop"], p["nc"], p["cnonce"])
		}
		want = h(ha1 + ":" + d.nonce + ":" + p["nc"] + ":" + p["cnonce"] + ":auth:" + ha2)
	}
	if p["response"] != want {
		return fmt.Errorf("response %q, want %q", p["response"], want)
	}
	return nil
}

// authHandler answers 401 with challenge until verify accepts the
// request's Authorization, then 200 "secret".
func authHandler(challenge string, verify func(string) error) func(*session) {
	return func(ss *session) {
		head, err := ss.readRequest()
		if err != nil {
			return
		}
		if _, err := ss.readBody(head); err != nil {
			return
		}
		if authz, ok := headerOf(head, "Authorization"); ok && verify(authz) == nil {
			_ = ss.write([]byte("HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nsecret"))
			return
		}
		_ = ss.write([]byte("HTTP/1.0 401 Unauthorized\r\nWWW-Authenticate: " + challenge + "\r\nContent-Length: 4\r\n\r\ndeny"))
	}
}

func basicVerifier(login, password string) func(string) error {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(login+":"+password))
	return func(authz string) error {
		if authz != want {
			return fmt.Errorf("authorization %q", authz)
		}
		return nil
	}
}

func TestAuthAnswered(t *testing.T) {
	dg := digestServer{realm: "members.site.test", nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093",
		opaque: "5ccc069c403ebaf9f0171e9517f40e41", alg: "MD5", login: "alice", password: testPassword,
		method: "GET", uri: "/private?x=1", qop: true}
	withAlg := func(d digestServer, alg string) digestServer { d.alg = alg; return d }
	noQop := dg
	noQop.qop, noQop.opaque = false, ""
	hashed := withAlg(dg, "SHA-256")
	hashed.userhash = true
	post := dg
	post.method = "POST"
	cases := []struct {
		name, challenge, method string
		verify                  func(string) error
	}{
		{"basic", `Basic realm="members.site.test"`, "", basicVerifier("alice", testPassword)},
		{"basic token68-free unquoted realm", `basic realm=members.site.test, charset="UTF-8"`, "", basicVerifier("alice", testPassword)},
		{"digest MD5 qop=auth", `Digest realm="members.site.test", qop="auth,auth-int", algorithm=MD5, nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"`, "", dg.verify},
		{"digest MD5-sess", `Digest realm="members.site.test",nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093",opaque="5ccc069c403ebaf9f0171e9517f40e41",algorithm=MD5-sess,qop=auth`, "", withAlg(dg, "MD5-sess").verify},
		{"digest SHA-256 unquoted", `Digest realm=members.site.test, nonce=dcd98b7102dd2f0e8b11d0f600bfb0c093, opaque=5ccc069c403ebaf9f0171e9517f40e41, algorithm=SHA-256, qop=auth`, "", withAlg(dg, "SHA-256").verify},
		{"digest SHA-256-sess userhash", `Digest realm="members.site.test", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41", algorithm=SHA-256, qop="auth", userhash=true`, "", hashed.verify},
		{"digest RFC 2069 without qop", `Digest realm="members.site.test", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093"`, "", withAlg(noQop, "").verify},
		{"strongest of several challenges", `Basic realm="members.site.test", Digest realm="members.site.test", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41", algorithm=SHA-256, qop="auth", Digest realm="members.site.test", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", algorithm=MD5`, "", withAlg(dg, "SHA-256").verify},
		{"digest POST", `Digest realm="members.site.test", qop="auth", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41", algorithm=MD5`, "POST", post.verify},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, authHandler(tc.challenge, tc.verify))
			f := newFetcher(t, Config{AllowPrivate: true, Credentials: []Credential{
				{Domain: "other.test", Login: "mallory", Password: "nope"},
				{Domain: "SITE.test:" + srv.port(), Realm: "members.site.test", Login: "alice", Password: testPassword},
			}})
			resp, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/private?x=1", Method: tc.method})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = resp.Close() })
			if resp.StatusCode != http.StatusOK || string(readAll(t, resp.Payload)) != "secret" {
				t.Fatalf("status %d: the server did not accept the answer", resp.StatusCode)
			}
			if len(resp.Annotations) != 0 || srv.accepted.Load() != 2 {
				t.Fatalf("annotations %v, %d connections", resp.Annotations, srv.accepted.Load())
			}
			if _, ok := headerOf(resp.RequestBytes, "Authorization"); !ok {
				t.Fatalf("returned request bytes are not the second exchange's: %q", resp.RequestBytes)
			}
		})
	}
}

func TestAuthNotAnswered(t *testing.T) {
	const basic = `Basic realm="members"`
	cases := []struct {
		name, challenge string
		creds           []Credential
		header          http.Header
		connections     int32
	}{
		{"no credentials", basic, nil, nil, 1},
		{"realm differs", basic, []Credential{{Domain: "site.test:%s", Realm: "staff", Login: "a", Password: "p"}}, nil, 1},
		{"domain differs", basic, []Credential{{Domain: "site.test", Login: "a", Password: "p"}}, nil, 1},
		{"caller sent Authorization", basic, []Credential{{Domain: "site.test:%s", Login: "a", Password: "p"}},
			http.Header{"Authorization": {"Bearer x"}}, 1},
		{"only auth-int offered", `Digest realm="members", nonce="n", qop="auth-int"`, []Credential{{Domain: "site.test:%s", Login: "a", Password: "p"}}, nil, 1},
		{"unknown algorithm", `Digest realm="members", nonce="n", algorithm=SHA-1`, []Credential{{Domain: "site.test:%s", Login: "a", Password: "p"}}, nil, 1},
		{"digest without nonce", `Digest realm="members"`, []Credential{{Domain: "site.test:%s", Login: "a", Password: "p"}}, nil, 1},
		{"unknown scheme", `Bearer realm="members"`, []Credential{{Domain: "site.test:%s", Login: "a", Password: "p"}}, nil, 1},
		{"malformed header", `Basic realm="members`, []Credential{{Domain: "site.test:%s", Login: "a", Password: "p"}}, nil, 1},
		{"wrong password: answered once only", basic, []Credential{{Domain: "site.test:%s", Login: "a", Password: "wrong"}}, nil, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, authHandler(tc.challenge, basicVerifier("a", "right")))
			var creds []Credential
			for _, c := range tc.creds {
				if strings.Contains(c.Domain, "%s") {
					c.Domain = fmt.Sprintf(c.Domain, srv.port())
				}
				creds = append(creds, c)
			}
			f := newFetcher(t, Config{AllowPrivate: true, Credentials: creds})
			resp, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/", Header: tc.header})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = resp.Close() })
			if resp.StatusCode != http.StatusUnauthorized || string(readAll(t, resp.Payload)) != "deny" {
				t.Fatalf("status %d, want the 401 as is", resp.StatusCode)
			}
			if n := srv.accepted.Load(); n != tc.connections {
				t.Fatalf("%d requests, want %d", n, tc.connections)
			}
		})
	}
}

func TestAuthFailureHidesPassword(t *testing.T) {
	// The server challenges, then drops the authenticated request.
	srv := startServer(t, func(ss *session) {
		head, err := ss.readRequest()
		if err != nil {
			return
		}
		if _, ok := headerOf(head, "Authorization"); ok {
			ss.reset()
			return
		}
		_ = ss.write([]byte("HTTP/1.0 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"r\"\r\n\r\n"))
	})
	cred := Credential{Domain: "site.test:" + srv.port(), Login: "alice", Password: "hunter2-secret"}
	f := newFetcher(t, Config{AllowPrivate: true, Credentials: []Credential{cred}})
	_, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/"})
	fe := fetchErr(t, err, StatusConnectionBroken, true)
	enc := base64.StdEncoding.EncodeToString([]byte("alice:hunter2-secret"))
	for _, s := range []string{fe.Error(), fmt.Sprint(cred), fmt.Sprintf("%+v", Config{Credentials: []Credential{cred}}), fmt.Sprintf("%#v", cred)} {
		if strings.Contains(s, "hunter2") || strings.Contains(s, enc) {
			t.Fatalf("password leaked: %s", s)
		}
	}
}

// TestDigestRFC7616Vectors checks the computation against the worked
// examples of RFC 7616 section 3.9.1.
func TestDigestRFC7616Vectors(t *testing.T) {
	c := Credential{Login: "Mufasa", Password: "Circle of Life"}
	for alg, want := range map[string]string{
		"MD5":     "8ca523f5e9506fed4657c9700eebdbec",
		"SHA-256": "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1",
	} {
		ch := challenge{scheme: "digest", params: map[string]string{
			"realm": "http-auth@example.org", "qop": "auth, auth-int", "algorithm": alg,
			"nonce": "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "opaque": "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"}}
		got, err := digestAuthorization(ch, c, "GET", "/dir/index.html", "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
		if err != nil {
			t.Fatal(err)
		}
		if p := authParams(got); p["response"] != want {
			t.Errorf("%s: response %q, want %q (%s)", alg, p["response"], want, got)
		}
	}
}

func TestCredentialValidate(t *testing.T) {
	bad := []Credential{
		{Login: "a", Password: "p"},
		{Domain: "site.test", Password: "p"},
		{Domain: "site.test", Login: "a:b", Password: "p"},
		{Domain: "site test", Login: "a", Password: "p"},
		{Domain: "site.test", Login: "a\r\nX: y", Password: "p"},
		{Domain: "site.test", Realm: "r\n", Login: "a", Password: "p"},
	}
	for _, c := range bad {
		err := Config{Credentials: []Credential{c}}.Validate()
		if err == nil || !strings.Contains(err.Error(), "credentials[0]") {
			t.Errorf("Validate(%v) = %v, want a credentials[0] error", c, err)
		}
	}
}
