package fetch

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseChallenges(t *testing.T) {
	cases := []struct {
		in   string
		want []challenge
	}{
		{`Basic realm="x"`, []challenge{{scheme: "basic", params: map[string]string{"realm": "x"}}}},
		{`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`, []challenge{
			{scheme: "newauth", params: map[string]string{"realm": "apps", "type": "1", "title": `Login to "apps"`}},
			{scheme: "basic", params: map[string]string{"realm": "simple"}}}},
		{`Digest Realm = "a,b" ,  NONCE=abc,,qop="auth, auth-int"`, []challenge{
			{scheme: "digest", params: map[string]string{"realm": "a,b", "nonce": "abc", "qop": "auth, auth-int"}}}},
		{`Negotiate, NTLM`, []challenge{{scheme: "negotiate", params: map[string]string{}}, {scheme: "ntlm", params: map[string]string{}}}},
		{`Negotiate YIIBhgYGKwYBBQUCoIIBejCCAXag==, Basic realm=r`, []challenge{
			{scheme: "negotiate", params: map[string]string{}, token68: "YIIBhgYGKwYBBQUCoIIBejCCAXag=="},
			{scheme: "basic", params: map[string]string{"realm": "r"}}}},
		{`  `, nil},
	}
	for _, tc := range cases {
		got, err := parseChallenges(tc.in)
		if err != nil {
			t.Errorf("parseChallenges(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseChallenges(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestParseChallengesBadInput(t *testing.T) {
	cases := []struct{ in, want string }{
		{`Basic realm="open`, `byte 12: unterminated quoted string`},
		{`=x`, `byte 0: expected an auth scheme, found '='`},
		{`Basic realm="a" junk`, `byte 16: expected ',' or end of header, found 'j'`},
		{"Basic realm=\"a\x01\"", `byte 14: control character '\x01'`},
		{`Basic@ realm=x`, `byte 5: unexpected '@' after auth scheme "Basic"`},
		{`Negotiate abc==, realm=x`, `parameter "realm" after the token68 of negotiate`},
		{`Digest nonce=x, realm=`, `byte 21: unexpected '=' after auth scheme "realm"`},
	}
	for _, tc := range cases {
		_, err := parseChallenges(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseChallenges(%q) = %v, want error containing %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{`Basic realm="x"`, `Digest a=b, c="d\"e", Basic x==`, `,,=`, `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseChallenges(s) // must not panic
	})
}
