package messages

import (
	"errors"
	"fmt"
	"strings"
)

// Control commands (the <crawl>.control topic).
const (
	CommandPause      = "pause"
	CommandResume     = "resume"
	CommandTerminate  = "terminate"
	CommandSeeds      = "seeds"
	CommandExclusions = "exclusions"
)

// DecodeControl parses and validates a control message: the command must be
// one of pause, resume, terminate, seeds (with urls) or exclusions (with
// surts or urls).
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

// Validate checks the command and that it carries what it needs.
func (c Control) Validate() error {
	switch c.Command {
	case CommandPause, CommandResume, CommandTerminate:
	case CommandSeeds:
		if len(c.URLs) == 0 {
			return errors.New(`command "seeds" needs a non-empty "urls" list`)
		}
	case CommandExclusions:
		if len(c.SURTs) == 0 && len(c.URLs) == 0 {
			return errors.New(`command "exclusions" needs a non-empty "surts" or "urls" list`)
		}
	case "":
		return errors.New(`missing required field "command"`)
	default:
		return fmt.Errorf("unknown command %q (want one of pause, resume, terminate, seeds, exclusions)", c.Command)
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
