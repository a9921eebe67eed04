package profile

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestSecretsNeverPrinted(t *testing.T) {
	p := Default()
	err := Decode(strings.NewReader(`
credentials:
  http:
    - {domain: example.org, realm: members, login: alice, password: hunter2-secret}
  forms:
    - domain: example.org
      loginUri: https://example.org/login
      formItems: {user: alice, pass: hunter2-secret}
`), &p)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Credentials.HTTP[0].Password.Reveal(); got != "hunter2-secret" {
		t.Fatalf("Reveal = %q", got)
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "cred", p.Credentials.HTTP[0].Password)
	for what, s := range map[string]string{
		"yaml": p.YAML(), "fmt": fmt.Sprintf("%v %+v", p.Credentials, p.Credentials.Forms[0].FormItems), "slog": logged.String(),
	} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("%s output reveals the secret:\n%s", what, s)
		}
	}
}

func TestRecordSettingsValidate(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"clamav: {onUnavailable: drop}", "clamav.onUnavailable"},
		{"clamav: {timeoutSeconds: 0}", "clamav.timeoutSeconds"},
		{"clamav: {retries: -1}", "clamav.retries"},
		{"clamav: {streamMaxLengthBytes: 0}", "clamav.streamMaxLengthBytes"},
		{"credentials: {http: [{domain: '', login: a}]}", "credentials.http[0].domain"},
		{"credentials: {http: [{domain: a.org}]}", "credentials.http[0].login"},
		{"credentials: {forms: [{domain: a.org, loginUri: /login}]}", "credentials.forms[0].loginUri"},
		{"credentials: {forms: [{domain: a.org, loginUri: 'http://a.org/l', method: PUT}]}", "credentials.forms[0].method"},
		{"fetch: {proxy: 'ftp://x:1'}", "fetch.proxy"},
	}
	for _, tc := range tests {
		p := Default()
		err := Decode(strings.NewReader(tc.yaml), &p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want mention of %s", tc.yaml, err, tc.want)
		}
	}
	p := Default()
	if err := Decode(strings.NewReader("fetch: {proxy: 'socks5://u:p@127.0.0.1:1080'}\nclamav: {address: 'unix:///run/clamd.sock', onUnavailable: writeUnscanned}"), &p); err != nil {
		t.Fatal(err)
	}
}

// TestWARCVersion checks warc.version: WARC/1.0 by default, 1.1 on request
// (quoted or not, in the file or with --set), anything else an error that
// names the setting and the accepted values.
func TestWARCVersion(t *testing.T) {
	if got := Default().WARC.Version; got != WARCVersion10 {
		t.Fatalf("default warc.version = %q, want %q", got, WARCVersion10)
	}
	tests := []struct {
		name, yaml, set string // set: a --set value of warc.version instead of yaml
		want, wantErr   string
	}{
		{name: "absent", yaml: "warc: {prefix: BL}", want: "1.0"},
		{name: "quoted 1.1", yaml: "warc: {version: '1.1'}", want: "1.1"},
		{name: "unquoted 1.1", yaml: "warc: {version: 1.1}", want: "1.1"},
		{name: "unquoted 1.0", yaml: "warc: {version: 1.0}", want: "1.0"},
		{name: "set 1.0", set: "1.0", want: "1.0"},
		{name: "set 1.1", set: "1.1", want: "1.1"},
		{name: "1.2", yaml: "warc: {version: '1.2'}", wantErr: `warc.version: "1.2" is not one of "1.0"`},
		{name: "version line", yaml: "warc: {version: WARC/1.1}", wantErr: `warc.version: "WARC/1.1"`},
		{name: "trailing zero", yaml: "warc: {version: 1.10}", wantErr: `warc.version: "1.10"`},
		{name: "empty", yaml: "warc: {version: ''}", wantErr: `warc.version: "" is not one of`},
		{name: "set 1", set: "1", wantErr: `warc.version: "1" is not one of`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Default()
			var err error
			if tc.set != "" {
				err = p.Set("warc.version", tc.set)
			} else {
				err = Decode(strings.NewReader(tc.yaml), &p)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || p.WARC.Version != tc.want {
				t.Fatalf("warc.version = %q (err %v), want %q", p.WARC.Version, err, tc.want)
			}
		})
	}
}
