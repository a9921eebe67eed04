package admin

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/internal/testlog"
)

// A token file is read again when it changes, however it is changed; a
// change that leaves no usable token keeps the last one, warned about once,
// and the token never reaches the log.
func TestTokenFileReload(t *testing.T) {
	replace := func(t *testing.T, path, content string) {
		t.Helper()
		// As a Secret update or an editor's save does: a new file renamed
		// over the old one.
		tmp := path + ".new"
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	rewrite := func(t *testing.T, path, content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(t *testing.T, path, _ string) {
		t.Helper()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
	type step struct {
		change  func(t *testing.T, path, content string)
		content string
		want    string // the token in force after the change
	}
	for _, tc := range []struct {
		name     string
		steps    []step
		wantWarn int // warnings logged over all steps
	}{
		{"rewritten in place", []step{{rewrite, "sekrit-2-long\n", "sekrit-2-long"}}, 0},
		{"replaced by rename", []step{{replace, "sekrit-2\n", "sekrit-2"}}, 0},
		{"same length, rewritten in place", []step{{rewrite, "sekrit-9\n", "sekrit-9"}}, 0},
		{"emptied, then written", []step{{rewrite, "", "sekrit-1"}, {rewrite, "sekrit-3\n", "sekrit-3"}}, 1},
		{"two tokens, then one", []step{{rewrite, "a b\n", "sekrit-1"}, {rewrite, "sekrit-c\n", "sekrit-c"}}, 1},
		{"removed, then back", []step{{remove, "", "sekrit-1"}, {replace, "sekrit-b\n", "sekrit-b"}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "token")
			rewrite(t, path, "sekrit-1\n")
			log, logs := testlog.New(slog.LevelInfo)
			tok, err := OpenTokenFile(path, log)
			if err != nil {
				t.Fatal(err)
			}
			if tok.Value() != "sekrit-1" || tok.Path() != path {
				t.Fatalf("opened: %q from %q", tok.Value(), tok.Path())
			}
			for i, s := range tc.steps {
				s.change(t, path, s.content)
				// Asked twice: a bad file is warned about once.
				for range 2 {
					if got := tok.Value(); got != s.want {
						t.Fatalf("step %d: token %q, want %q", i, got, s.want)
					}
				}
			}
			out := logs.String()
			if n := strings.Count(out, "level=WARN"); n != tc.wantWarn {
				t.Fatalf("%d warnings, want %d:\n%s", n, tc.wantWarn, out)
			}
			if strings.Contains(out, "sekrit") {
				t.Fatalf("the log holds a token:\n%s", out)
			}
		})
	}
}

func TestOpenTokens(t *testing.T) {
	op, ro := writeToken(t, "op\n"), writeToken(t, "ro\n")
	for _, tc := range []struct {
		name, op, ro string
		wantErr      string
		want         [2]bool // operator, read-only configured
	}{
		{"none", "", "", "", [2]bool{}},
		{"operator", op, "", "", [2]bool{true, false}},
		{"read-only", "", ro, "", [2]bool{false, true}},
		{"both", op, ro, "", [2]bool{true, true}},
		{"the same token twice", op, writeToken(t, "op"), "is the operator token", [2]bool{}},
		{"missing operator file", filepath.Join(t.TempDir(), "x"), "", "admin token file", [2]bool{}},
		{"missing read-only file", "", filepath.Join(t.TempDir(), "x"), "read-only admin token file", [2]bool{}},
		{"empty file", writeToken(t, "\n"), "", "is empty", [2]bool{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := OpenTokens(tc.op, tc.ro, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := [2]bool{ts.Operator != nil, ts.ReadOnly != nil}; got != tc.want || ts.Configured() != (got != [2]bool{}) {
				t.Fatalf("configured %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTokensAccess(t *testing.T) {
	ts := Tokens{Operator: StaticToken("op"), ReadOnly: StaticToken("ro")}
	for _, tc := range []struct {
		auth string
		ts   Tokens
		want Access
	}{
		{"", ts, NoAccess},
		{"Bearer op", ts, OperatorAccess},
		{"Bearer ro", ts, ReadAccess},
		{"Bearer  ro ", ts, ReadAccess},
		{"Bearer r", ts, NoAccess},
		{"Bearer ", ts, NoAccess},
		{"Bearer ", Tokens{}, NoAccess},
		{"Bearer op", Tokens{ReadOnly: StaticToken("ro")}, NoAccess},
		{"Basic op", ts, NoAccess},
	} {
		r, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		if got := tc.ts.Access(r); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.auth, got, tc.want)
		}
	}
	if StaticToken("") != nil {
		t.Error(`StaticToken("") is a token`)
	}
}
