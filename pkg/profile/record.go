package profile

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// WARC versions (warc.version).
const (
	// WARCVersion10 writes WARC/1.0 as Heritrix does, with 14-digit
	// WARC-Date: IA's tools and hanzo warctools reject WARC/1.1.
	WARCVersion10 = "1.0"
	// WARCVersion11 writes WARC/1.1 with millisecond WARC-Date.
	WARCVersion11 = "1.1"
)

// validateVersion accepts the versions pkg/warcwriter can write. An
// unquoted 1.0 reaches the string field as its text, so quoting is
// optional in the file.
func (w WARC) validateVersion() error {
	switch w.Version {
	case WARCVersion10, WARCVersion11:
		return nil
	}
	return fmt.Errorf("warc.version: %q is not one of %q (WARC/1.0, as Heritrix writes) or %q",
		w.Version, WARCVersion10, WARCVersion11)
}

// ClamAV on-unavailable choices: what happens to a capture that could not
// be scanned after the bounded retries.
const (
	// ClamAVHold puts the URI back in the frontier to be fetched again
	// later; nothing is written.
	ClamAVHold = "hold"
	// ClamAVWriteUnscanned writes the capture to the normal WARCs with the
	// annotation "clamav:unscanned".
	ClamAVWriteUnscanned = "writeUnscanned"
)

// ClamAV settings for virus scanning of fetched content.
type ClamAV struct {
	// Address of clamd: "tcp://host:port", "host:port" or "unix:///path".
	// Empty disables scanning (the worker logs that it is off).
	Address string `yaml:"address"`
	// TimeoutSeconds bounds one scan, connect included.
	TimeoutSeconds int `yaml:"timeoutSeconds"`
	// Retries is how many more times a failed scan is tried.
	Retries int `yaml:"retries"`
	// StreamMaxLengthBytes must match clamd's StreamMaxLength: larger
	// bodies have only their first StreamMaxLengthBytes scanned (and the
	// event is annotated), instead of clamd refusing the stream.
	StreamMaxLengthBytes int64 `yaml:"streamMaxLengthBytes"`
	// OnUnavailable is "hold" or "writeUnscanned".
	OnUnavailable string `yaml:"onUnavailable"`
}

func defaultClamAV() ClamAV {
	return ClamAV{TimeoutSeconds: 60, Retries: 2, StreamMaxLengthBytes: 100 << 20, OnUnavailable: ClamAVHold}
}

func (c ClamAV) validate() error {
	var errs []error
	if c.TimeoutSeconds <= 0 {
		errs = append(errs, errors.New("clamav.timeoutSeconds: must be > 0"))
	}
	if c.Retries < 0 {
		errs = append(errs, errors.New("clamav.retries: must be >= 0"))
	}
	if c.StreamMaxLengthBytes <= 0 {
		errs = append(errs, errors.New("clamav.streamMaxLengthBytes: must be > 0"))
	}
	switch c.OnUnavailable {
	case ClamAVHold, ClamAVWriteUnscanned:
	default:
		errs = append(errs, fmt.Errorf("clamav.onUnavailable: %q is not one of hold, writeUnscanned", c.OnUnavailable))
	}
	return errors.Join(errs...)
}

// Credentials the fetcher presents, as Heritrix's credential store.
type Credentials struct {
	// HTTP are RFC 7617/7616 basic and digest credentials.
	HTTP []HTTPCredential `yaml:"http"`
	// Forms are HTML form logins performed before a domain is crawled.
	Forms []FormCredential `yaml:"forms"`
}

// HTTPCredential answers a 401 from Domain whose challenge names Realm.
type HTTPCredential struct {
	// Domain is the host (and port, if not the default) it applies to.
	Domain string `yaml:"domain"`
	// Realm must equal the challenge's realm; empty matches any realm.
	Realm    string `yaml:"realm"`
	Login    string `yaml:"login"`
	Password Secret `yaml:"password"`
}

// FormCredential logs in by submitting a form once per host, before any
// other URI of Domain is fetched; the session cookies then go in the jar.
type FormCredential struct {
	Domain   string `yaml:"domain"`
	LoginURI string `yaml:"loginUri"`
	// Method is POST (default) or GET.
	Method string `yaml:"method"`
	// FormItems are the submitted fields, e.g. username and password.
	FormItems map[string]Secret `yaml:"formItems"`
}

// Secret is a setting that must never be printed: it renders as "***" in
// logs, `config show` and profile explanations.
type Secret string

// String hides the value.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "***"
}

// LogValue hides the value from log/slog.
func (s Secret) LogValue() any { return s.String() }

// MarshalYAML hides the value when a profile is printed.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// Reveal returns the value, for the one place that sends it.
func (s Secret) Reveal() string { return string(s) }

func (c Credentials) validate() error {
	var errs []error
	for i, h := range c.HTTP {
		if h.Domain == "" || strings.ContainsAny(h.Domain, "/ ") {
			errs = append(errs, fmt.Errorf("credentials.http[%d].domain: %q must be a host[:port]", i, h.Domain))
		}
		if h.Login == "" {
			errs = append(errs, fmt.Errorf("credentials.http[%d].login: must not be empty", i))
		}
	}
	for i, f := range c.Forms {
		if f.Domain == "" || strings.ContainsAny(f.Domain, "/ ") {
			errs = append(errs, fmt.Errorf("credentials.forms[%d].domain: %q must be a host[:port]", i, f.Domain))
		}
		if u, err := url.Parse(f.LoginURI); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			errs = append(errs, fmt.Errorf("credentials.forms[%d].loginUri: %q must be an absolute http(s) URL", i, f.LoginURI))
		}
		switch strings.ToUpper(f.Method) {
		case "", "POST", "GET":
		default:
			errs = append(errs, fmt.Errorf("credentials.forms[%d].method: %q must be GET or POST", i, f.Method))
		}
	}
	return errors.Join(errs...)
}

func validateProxy(p string) error {
	if p == "" {
		return nil
	}
	u, err := url.Parse(p)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "socks5") {
		return fmt.Errorf("fetch.proxy: %q must be http://host:port or socks5://[user:pass@]host:port", p)
	}
	return nil
}
