package messages

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Control is an operator command on the <crawl>.control topic, keyed by
// worker id or "*". Fields a command does not use must be absent, so a
// command that names something it cannot act on (a host for a seeds
// command) is refused rather than half-applied.
type Control struct {
	// ID identifies the command for idempotency and its acknowledgement
	// (trawler:<crawl>:control:ack:<id>). Optional on the wire for older
	// producers: the consumer then derives one from the record's position.
	ID string `json:"id,omitempty"`
	// Command is pause, resume, terminate, seeds, exclusions, sheets or delete.
	Command string `json:"command"`
	// Scope says what pause, resume and terminate apply to: crawl (the
	// default), stream (Stream), host (Host) or target (Source).
	Scope string `json:"scope,omitempty"`
	// Stream restricts a command to the workers of one stream (npld, bypm).
	Stream string `json:"stream,omitempty"`
	// Host is the queue (host[:port]) paused or resumed, for scope host.
	Host string `json:"host,omitempty"`
	// Source is the source tag (seed in crawled events) of a target, for
	// scope target.
	Source string `json:"source,omitempty"`
	// Target is the worker id the command is for, or "*" (or empty) for all.
	Target string `json:"target,omitempty"`
	// URLs are the seeds (seeds), or URLs whose implied SURT prefixes are
	// excluded (exclusions), get sheets (sheets) or are deleted (delete).
	URLs []string `json:"urls,omitempty"`
	// SURTs are literal SURT prefixes, e.g. "http://(com,example,".
	SURTs []string `json:"surts,omitempty"`
	// Action is add (the default) or remove, for exclusions.
	Action string `json:"action,omitempty"`
	// Sheets are the sheet names attached to the prefixes (sheets).
	Sheets []string `json:"sheets,omitempty"`
	// Regex selects queued URIs to delete by their URL (delete), Go RE2
	// syntax, matched anywhere in the URL unless anchored.
	Regex string `json:"regex,omitempty"`
	// Timestamp is when the command was issued (ISO-8601).
	Timestamp string `json:"timestamp,omitempty"`
	// By names who sent the command, for the log and the acknowledgement.
	By string `json:"by,omitempty"`
	// IssuedBy is the older name of By, still accepted.
	IssuedBy string `json:"issued_by,omitempty"`
}

// Control commands (the <crawl>.control topic).
const (
	CommandPause      = "pause"
	CommandResume     = "resume"
	CommandTerminate  = "terminate"
	CommandSeeds      = "seeds"
	CommandExclusions = "exclusions"
	CommandSheets     = "sheets"
	CommandDelete     = "delete"
)

// Scopes of pause, resume and terminate.
const (
	ScopeCrawl  = "crawl"
	ScopeStream = "stream"
	ScopeHost   = "host"
	ScopeTarget = "target"
)

// Actions of the exclusions command.
const (
	ActionAdd    = "add"
	ActionRemove = "remove"
)

// maxControlID bounds a command id, which becomes part of Redis keys.
const maxControlID = 128

// DecodeControl parses and validates a control message (see Validate).
func DecodeControl(b []byte) (Control, error) {
	var c Control
	if err := decodeStrict(b, &c); err != nil {
		return Control{}, fmt.Errorf("decode control message: %w", err)
	}
	if err := c.Validate(); err != nil {
		return Control{}, fmt.Errorf("decode control message: %w", err)
	}
	return c, nil
}

// Who returns who sent the command (By, else the older IssuedBy), or
// "unknown".
func (c Control) Who() string {
	switch {
	case c.By != "":
		return c.By
	case c.IssuedBy != "":
		return c.IssuedBy
	}
	return "unknown"
}

// EffectiveScope is Scope, or crawl when it is empty.
func (c Control) EffectiveScope() string {
	if c.Scope == "" {
		return ScopeCrawl
	}
	return c.Scope
}

// Validate checks the command and that it carries what it needs and
// nothing it would ignore.
func (c Control) Validate() error {
	if err := c.validateCommon(); err != nil {
		return err
	}
	switch c.Command {
	case CommandPause, CommandResume, CommandTerminate:
		return c.validateScoped()
	case CommandSeeds:
		if len(c.URLs) == 0 {
			return errors.New(`command "seeds" needs a non-empty "urls" list`)
		}
		if len(c.SURTs) > 0 {
			return errors.New(`command "seeds" takes "urls", not "surts"`)
		}
		return c.refuse("scope", "host", "source", "action", "sheets", "regex")
	case CommandExclusions:
		if len(c.SURTs) == 0 && len(c.URLs) == 0 {
			return errors.New(`command "exclusions" needs a non-empty "surts" or "urls" list`)
		}
		switch c.Action {
		case "", ActionAdd, ActionRemove:
		default:
			return fmt.Errorf("action %q: want add or remove", c.Action)
		}
		return c.refuse("scope", "host", "source", "sheets", "regex")
	case CommandSheets:
		if len(c.SURTs) == 0 && len(c.URLs) == 0 {
			return errors.New(`command "sheets" needs a non-empty "surts" or "urls" list of prefixes`)
		}
		if len(c.Sheets) == 0 {
			return errors.New(`command "sheets" needs a non-empty "sheets" list`)
		}
		for i, s := range c.Sheets {
			if strings.TrimSpace(s) == "" {
				return fmt.Errorf("sheets[%d] is empty", i)
			}
		}
		return c.refuse("scope", "host", "source", "action", "regex")
	case CommandDelete:
		if len(c.SURTs) == 0 && len(c.URLs) == 0 && c.Regex == "" {
			return errors.New(`command "delete" needs "surts", "urls" or "regex"`)
		}
		if c.Regex != "" {
			if _, err := regexp.Compile(c.Regex); err != nil {
				return fmt.Errorf("regex: %w", err)
			}
		}
		return c.refuse("scope", "host", "source", "action", "sheets")
	case "":
		return errors.New(`missing required field "command"`)
	default:
		return fmt.Errorf("unknown command %q (want one of pause, resume, terminate, seeds, exclusions, sheets, delete)", c.Command)
	}
}

// validateCommon checks the fields every command may carry.
func (c Control) validateCommon() error {
	if len(c.ID) > maxControlID {
		return fmt.Errorf("id is %d bytes long (at most %d)", len(c.ID), maxControlID)
	}
	for i := 0; i < len(c.ID); i++ {
		if b := c.ID[i]; b <= ' ' || b >= 0x7f {
			return fmt.Errorf("id: byte %d is a space, control or non-ASCII character", i)
		}
	}
	if c.Timestamp != "" {
		if _, err := ParseISOTime(c.Timestamp); err != nil {
			return fmt.Errorf("timestamp: %w", err)
		}
	}
	for i, u := range c.URLs {
		if strings.TrimSpace(u) == "" {
			return fmt.Errorf("urls[%d] is empty", i)
		}
	}
	for i, s := range c.SURTs {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("surts[%d] is empty", i)
		}
	}
	return nil
}

// validateScoped checks pause, resume and terminate.
func (c Control) validateScoped() error {
	if len(c.URLs) > 0 || len(c.SURTs) > 0 {
		return fmt.Errorf(`command %q takes no "urls" or "surts"`, c.Command)
	}
	if err := c.refuse("action", "sheets", "regex"); err != nil {
		return err
	}
	switch c.EffectiveScope() {
	case ScopeCrawl:
		return c.refuse("host", "source")
	case ScopeStream:
		if c.Stream == "" {
			return errors.New(`scope "stream" needs "stream"`)
		}
		return c.refuse("host", "source")
	case ScopeHost:
		if strings.TrimSpace(c.Host) == "" || strings.ContainsAny(c.Host, "/ \t") {
			return fmt.Errorf(`scope "host" needs "host" as host[:port], got %q`, c.Host)
		}
		return c.refuse("source")
	case ScopeTarget:
		if strings.TrimSpace(c.Source) == "" {
			return errors.New(`scope "target" needs "source" (the target's source tag)`)
		}
		return c.refuse("host")
	default:
		return fmt.Errorf("unknown scope %q (want crawl, stream, host or target)", c.Scope)
	}
}

// refuse reports the first of the named fields that is set.
func (c Control) refuse(fields ...string) error {
	for _, f := range fields {
		var set bool
		switch f {
		case "scope":
			set = c.Scope != ""
		case "host":
			set = c.Host != ""
		case "source":
			set = c.Source != ""
		case "action":
			set = c.Action != ""
		case "sheets":
			set = len(c.Sheets) > 0
		case "regex":
			set = c.Regex != ""
		}
		if set {
			return fmt.Errorf("field %q does not apply to command %q", f, c.Command)
		}
	}
	return nil
}

// DecodeWarcNotice parses and validates a closed-WARC notice: it must name
// the file and its path, counts must not be negative and the opened/closed
// times, when present, must be ISO-8601.
func DecodeWarcNotice(b []byte) (WarcNotice, error) {
	var n WarcNotice
	if err := decodeStrict(b, &n); err != nil {
		return WarcNotice{}, fmt.Errorf("decode WARC notice: %w", err)
	}
	if err := n.Validate(); err != nil {
		return WarcNotice{}, fmt.Errorf("decode WARC notice: %w", err)
	}
	return n, nil
}

// Validate checks a notice before it is published or acted on.
func (n WarcNotice) Validate() error {
	switch {
	case n.Filename == "":
		return errors.New(`missing required field "filename"`)
	case strings.ContainsAny(n.Filename, `/\`):
		return fmt.Errorf("filename %q must be a bare file name", n.Filename)
	case n.Path == "":
		return errors.New(`missing required field "path"`)
	case n.Size < 0:
		return fmt.Errorf("size %d is negative", n.Size)
	case n.Records < 0:
		return fmt.Errorf("records %d is negative", n.Records)
	case n.Kind != "" && n.Kind != NoticeKindCrawlLog:
		// A mover must know what it ships; a kind it has never heard of
		// is refused rather than taken for a WARC.
		return fmt.Errorf("kind %q is not %q or empty", n.Kind, NoticeKindCrawlLog)
	}
	for _, f := range [...]struct{ name, v string }{{"opened", n.Opened}, {"closed", n.Closed}} {
		if f.v == "" {
			continue
		}
		if _, err := ParseISOTime(f.v); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return nil
}
