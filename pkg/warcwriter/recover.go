package warcwriter

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/internal/countio"

	"github.com/klauspost/compress/gzip"
)

// RecoverOpen repairs the files a crashed process left as "*.warc.gz.open"
// in dir: it keeps the complete records (whole gzip members holding a whole
// WARC record), truncates anything after the last one (a partial member or
// garbage), renames the file to its final name and returns it so that the
// caller can publish the usual closed-file notice. A file without one
// complete record is removed. Call it before New on the same directory: it
// does not know which files a live Writer holds.
//
// Errors for single files are joined; the other files are still recovered.
//
// RecoverOpen takes every open file in dir, so only a caller that owns the
// whole directory may use it; writers sharing a directory use
// RecoverOpenHost.
func RecoverOpen(dir string, logger *slog.Logger) ([]ClosedFile, error) {
	return recoverMatching(dir, func(string) bool { return true }, logger)
}

// RecoverOpenHost is RecoverOpen restricted to the open files whose name's
// {host} part (Config.Hostname) is host. Writers that share a directory
// each have their own host part, so one of them recovering a dead run of
// its own never touches the file a live sibling is writing.
func RecoverOpenHost(dir, host string, logger *slog.Logger) ([]ClosedFile, error) {
	if host == "" {
		return nil, fmt.Errorf("recover open warcs in %s: empty host", dir)
	}
	return recoverMatching(dir, func(name string) bool {
		h, ok := HostFromName(name)
		return ok && h == host
	}, logger)
}

// OpenHosts lists, sorted and without repeats, the {host} parts of the
// open ("*.warc.gz.open") files in dir: whose files may need recovering.
// A missing directory has none.
func OpenHosts(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*"+warcSuffix+openSuffix))
	if err != nil {
		return nil, fmt.Errorf("list open warcs in %s: %w", dir, err)
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		if h, ok := HostFromName(filepath.Base(p)); ok && !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	sort.Strings(out)
	return out, nil
}

// nameHost finds the {host} part of a file name: what follows the
// timestamp and serial, up to the suffix. The prefix may hold dashes and
// digits itself, so the match is anchored on the 17-digit timestamp.
var nameHost = regexp.MustCompile(`-\d{17}-\d{5,}-(.+?)\.warc\.gz(?:\.open)?$`)

// HostFromName returns the {host} part of a file name made by a Writer
// ({prefix}-{yyyyMMddHHmmssSSS}-{serial}-{host}.warc.gz, or .open), and
// false for any other name.
func HostFromName(name string) (string, bool) {
	m := nameHost.FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// recoverMatching recovers the open files in dir whose base name keep
// accepts.
func recoverMatching(dir string, keep func(name string) bool, logger *slog.Logger) ([]ClosedFile, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*"+warcSuffix+openSuffix))
	if err != nil {
		return nil, fmt.Errorf("list open warcs in %s: %w", dir, err)
	}
	var out []ClosedFile
	var errs []error
	for _, p := range paths {
		if !keep(filepath.Base(p)) {
			continue
		}
		cf, err := recoverFile(p, logger)
		switch {
		case err != nil:
			errs = append(errs, err)
		case cf != nil:
			out = append(out, *cf)
		}
	}
	return out, errors.Join(errs...)
}

// recoverFile repairs one open file; it returns nil, nil when the file held
// no complete record and was removed.
func recoverFile(openPath string, logger *slog.Logger) (*ClosedFile, error) {
	final := strings.TrimSuffix(openPath, openSuffix)
	if _, err := os.Lstat(final); err == nil {
		return nil, fmt.Errorf("recover warc %s: %s already exists", openPath, filepath.Base(final))
	}
	f, err := os.OpenFile(openPath, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("recover warc %s: %w", openPath, err)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("recover warc %s: %w", openPath, err)
	}
	good, records, scanErr := scanMembers(f)
	if records == 0 {
		logger.Warn("removing open warc without a complete record", "path", openPath, "size", st.Size(), "reason", scanErr)
		if err := os.Remove(openPath); err != nil {
			return nil, fmt.Errorf("recover warc %s: remove empty file: %w", openPath, err)
		}
		return nil, nil
	}
	if good < st.Size() {
		logger.Warn("truncating incomplete tail of open warc", "path", openPath,
			"offset", good, "dropped_bytes", st.Size()-good, "reason", scanErr)
		if err := f.Truncate(good); err != nil {
			return nil, fmt.Errorf("recover warc %s: truncate at %d: %w", openPath, good, err)
		}
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("recover warc %s: %w", openPath, err)
	}
	if err := os.Rename(openPath, final); err != nil {
		return nil, fmt.Errorf("recover warc %s: %w", openPath, err)
	}
	if err := syncDir(filepath.Dir(final)); err != nil {
		return nil, fmt.Errorf("recover warc %s: %w", openPath, err)
	}
	logger.Info("recovered open warc", "path", final, "size", good, "records", records)
	return &ClosedFile{Name: filepath.Base(final), Path: final, Size: good, Records: records,
		Opened: openedFromName(filepath.Base(final)), Closed: st.ModTime()}, nil
}

// scanMembers reads gzip members from r until the first one that is not a
// whole, valid WARC record. It returns the end offset of the last good
// member, the number of good members, and why scanning stopped (nil at a
// clean end of file).
func scanMembers(r io.Reader) (good, records int64, stop error) {
	cr := &countio.Reader{R: r}
	// gzip reads a flate.Reader (io.ByteReader) without read-ahead, so
	// cr.N-br.Buffered() is the exact end of each member.
	br := bufio.NewReader(cr)
	zr := new(gzip.Reader)
	for {
		if _, err := br.Peek(1); err == io.EOF {
			return good, records, nil
		}
		if err := zr.Reset(br); err != nil {
			return good, records, fmt.Errorf("member at %d: %w", good, err)
		}
		zr.Multistream(false)
		if err := checkRecord(zr); err != nil {
			return good, records, fmt.Errorf("member at %d: %w", good, err)
		}
		good = cr.N - int64(br.Buffered())
		records++
	}
}

// checkRecord reads one decompressed member to its end (which verifies the
// gzip checksum and length) and checks that it is framed as a WARC record.
func checkRecord(r io.Reader) error {
	head := make([]byte, 5)
	if _, err := io.ReadFull(r, head); err != nil {
		return fmt.Errorf("read record start: %w", err)
	}
	if string(head) != "WARC/" {
		return fmt.Errorf("member does not start with WARC/ (%q)", head)
	}
	tail := &tailWriter{}
	if _, err := io.Copy(tail, r); err != nil {
		return fmt.Errorf("read record: %w", err)
	}
	if !bytes.HasSuffix(tail.last, []byte("\r\n\r\n")) {
		return errors.New("record does not end with CRLF CRLF")
	}
	return nil
}

// tailWriter keeps the last four bytes written to it.
type tailWriter struct{ last []byte }

func (t *tailWriter) Write(p []byte) (int, error) {
	t.last = append(t.last, p...)
	if len(t.last) > 4 {
		t.last = append(t.last[:0], t.last[len(t.last)-4:]...)
	}
	return len(p), nil
}

// nameTime finds the yyyyMMddHHmmssSSS-serial part of a file name; prefix
// and host may contain dashes themselves.
var nameTime = regexp.MustCompile(`-(\d{17})-\d{5,}-`)

// openedFromName returns the time in a file name made by fileName, or the
// zero time.
func openedFromName(name string) time.Time {
	m := nameTime.FindStringSubmatch(name)
	if m == nil {
		return time.Time{}
	}
	t, err := time.ParseInLocation(nameTimeLayout+".000", m[1][:14]+"."+m[1][14:], time.UTC)
	if err != nil {
		return time.Time{}
	}
	return t
}
