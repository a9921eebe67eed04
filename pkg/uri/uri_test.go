package uri

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"http://www.Example.ORG:80/a/../b#frag", "http://www.example.org/b"},
		{"HTTP://EXAMPLE.com:8080", "http://example.com:8080/"},
		{"https://x.example:443/", "https://x.example/"},
		{"https://x.example:80/", "https://x.example:80/"},
		{"http://bücher.ch/", "http://xn--bcher-kva.ch/"},
		{"http://example.com/a b", "http://example.com/a%20b"},
		{"  http://example.com/\t", "http://example.com/"},
		{"http://example.com/%7Efoo%2f", "http://example.com/%7Efoo%2f"},
		{"http://example.com/?q=1#", "http://example.com/?q=1"},
		{"http://example.com/?", "http://example.com/?"},
		{"http://[::1]:8080/x", "http://[::1]:8080/x"},
		{"http://user:pw@h.example/", "http://user:pw@h.example/"},
	}
	for _, tt := range tests {
		got, err := Normalize(tt.in)
		if err != nil {
			t.Errorf("Normalize(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNormalizeBadInput(t *testing.T) {
	tests := []struct {
		in          string
		unsupported bool
		mention     string
	}{
		{"", false, "empty"},
		{"   ", false, "empty"},
		{"http://exa mple.com/", false, "forbidden"},
		{"ht!tp://example.com/", false, "missing a scheme"},
		{"example.com/page", false, "missing a scheme"},
		{"//example.com/", false, "missing a scheme"},
		{"http://", false, "host"},
		{"http://[::1/", false, "ipv6"},
		{"http://example.com:99999/", false, "port"},
		{"javascript:alert(1)", true, "javascript"},
		{"mailto:someone@example.com", true, "mailto"},
		{"data:text/plain,hi", true, "data"},
		{"ftp://example.com/", true, "ftp"},
		{"dns:example.com", true, "dns"},
	}
	for _, tt := range tests {
		got, err := Normalize(tt.in)
		if err == nil {
			t.Errorf("Normalize(%q) = %q, want error", tt.in, got)
			continue
		}
		if errors.Is(err, ErrUnsupportedScheme) != tt.unsupported {
			t.Errorf("Normalize(%q) error %v: unsupported-scheme = %v, want %v", tt.in, err, !tt.unsupported, tt.unsupported)
		}
		if !strings.Contains(strings.ToLower(err.Error()), tt.mention) {
			t.Errorf("Normalize(%q) error %q does not mention %q", tt.in, err, tt.mention)
		}
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		base, ref, want string
	}{
		{"http://example.com/a/b", "../c?x#y", "http://example.com/c?x"},
		{"http://example.com/a/b", "", "http://example.com/a/b"},
		{"http://example.com/a/b#f", "#top", "http://example.com/a/b"},
		{"http://example.com/a/b", "//cdn.Example.net/x.js", "http://cdn.example.net/x.js"},
		{"https://example.com/a/", "img/p.png", "https://example.com/a/img/p.png"},
		{"https://example.com/a/", "HTTP://Other.example:80/", "http://other.example/"},
		{"http://example.com/", "/path with space", "http://example.com/path%20with%20space"},
		{"http://example.com/", "?q=1", "http://example.com/?q=1"},
	}
	for _, tt := range tests {
		got, err := Resolve(tt.base, tt.ref)
		if err != nil {
			t.Errorf("Resolve(%q, %q): %v", tt.base, tt.ref, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Resolve(%q, %q) = %q, want %q", tt.base, tt.ref, got, tt.want)
		}
	}
}

func TestResolveBadInput(t *testing.T) {
	tests := []struct {
		base, ref   string
		unsupported bool
	}{
		{"http://example.com/", "javascript:alert(1)", true},
		{"http://example.com/", "JavaScript:void(0)", true},
		{"http://example.com/", "mailto:a@example.com", true},
		{"http://example.com/", "data:image/png;base64,AAAA", true},
		{"http://example.com/", "tel:+441234", true},
		{"http://example.com/", "http://exa mple.com/", false},
		{"http://example.com/", "http://[zz]/", false},
		{"", "/relative", false},
		{"not a url", "/relative", false},
		{"mailto:a@example.com", "/x", true},
	}
	for _, tt := range tests {
		got, err := Resolve(tt.base, tt.ref)
		if err == nil {
			t.Errorf("Resolve(%q, %q) = %q, want error", tt.base, tt.ref, got)
			continue
		}
		if errors.Is(err, ErrUnsupportedScheme) != tt.unsupported {
			t.Errorf("Resolve(%q, %q) error %v: unsupported-scheme mismatch, want %v", tt.base, tt.ref, err, tt.unsupported)
		}
	}
}

func TestHostAndAuthority(t *testing.T) {
	tests := []struct {
		in, host, authority string
	}{
		{"http://WWW.Example.com/x", "www.example.com", "www.example.com"},
		{"http://example.com:8080/", "example.com", "example.com:8080"},
		{"https://example.com:443/", "example.com", "example.com"},
		{"http://user:pw@example.com:81/", "example.com", "example.com:81"},
		{"http://[::1]:8080/", "[::1]", "[::1]:8080"},
		{"http://bücher.ch/", "xn--bcher-kva.ch", "xn--bcher-kva.ch"},
	}
	for _, tt := range tests {
		h, err := Host(tt.in)
		if err != nil || h != tt.host {
			t.Errorf("Host(%q) = %q, %v; want %q", tt.in, h, err, tt.host)
		}
		a, err := Authority(tt.in)
		if err != nil || a != tt.authority {
			t.Errorf("Authority(%q) = %q, %v; want %q", tt.in, a, err, tt.authority)
		}
	}
	for _, bad := range []string{"", "mailto:x@example.com", "http://exa mple.com/", "ht!tp://x/"} {
		if h, err := Host(bad); err == nil {
			t.Errorf("Host(%q) = %q, want error", bad, h)
		}
		if a, err := Authority(bad); err == nil {
			t.Errorf("Authority(%q) = %q, want error", bad, a)
		}
	}
}
