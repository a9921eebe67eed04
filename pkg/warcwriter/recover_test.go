package warcwriter

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeOpenFile writes three captures and a dns record, closes the writer
// and renames the file back to ".open", as a crash would have left it. It
// returns the open path, the location of the last record and the number of
// records.
func writeOpenFile(t *testing.T, dir string) (string, Location, int64) {
	t.Helper()
	w, _ := newTestWriter(t, testConfig(dir))
	for i := range 3 {
		f := newFetch(fmt.Sprintf("http://example.com/%d", i), fetchDate, body(uint64(i), 300), false)
		f.c.Metadata = &Metadata{Via: "http://example.com/"}
		if _, err := w.WriteCapture(context.Background(), f.c); err != nil {
			t.Fatal(err)
		}
	}
	last, err := w.WriteDNS(context.Background(), "example.com", fetchDate, "192.0.2.53", []byte("answer\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(dir, last.Filename)
	if err := os.Rename(final, final+openSuffix); err != nil {
		t.Fatal(err)
	}
	return final + openSuffix, last, 1 + 3*3 + 1
}

func TestRecoverOpen(t *testing.T) {
	tests := []struct {
		name string
		// damage changes the open file; it returns the expected size and
		// record count after recovery (records 0: file removed).
		damage func(t *testing.T, path string, last Location, records int64) (int64, int64)
	}{
		{"intact", func(t *testing.T, path string, last Location, records int64) (int64, int64) {
			return last.Offset + last.Length, records
		}},
		{"truncated mid-member", func(t *testing.T, path string, last Location, records int64) (int64, int64) {
			truncate(t, path, last.Offset+last.Length/2)
			return last.Offset, records - 1
		}},
		{"truncated in gzip header", func(t *testing.T, path string, last Location, records int64) (int64, int64) {
			truncate(t, path, last.Offset+3)
			return last.Offset, records - 1
		}},
		{"trailing garbage", func(t *testing.T, path string, last Location, records int64) (int64, int64) {
			appendBytes(t, path, []byte("garbage\x1f\x8b\x08 more garbage"))
			return last.Offset + last.Length, records
		}},
		{"trailing gzip member without a warc record", func(t *testing.T, path string, last Location, records int64) (int64, int64) {
			appendBytes(t, path, gzipBytes(t, "not a warc record\r\n\r\n"))
			return last.Offset + last.Length, records
		}},
		{"partial warcinfo only", func(t *testing.T, path string, last Location, records int64) (int64, int64) {
			truncate(t, path, 40)
			return 0, 0
		}},
		{"empty file", func(t *testing.T, path string, last Location, records int64) (int64, int64) {
			truncate(t, path, 0)
			return 0, 0
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, last, records := writeOpenFile(t, dir)
			wantSize, wantRecords := tc.damage(t, path, last, records)
			got, err := RecoverOpen(dir, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatalf("RecoverOpen: %v", err)
			}
			if names := warcFiles(t, dir); wantRecords == 0 {
				if len(got) != 0 || len(names) != 0 {
					t.Fatalf("recovered %+v, dir holds %v; want the file removed", got, names)
				}
				return
			}
			final := strings.TrimSuffix(path, openSuffix)
			if len(got) != 1 || got[0].Path != final || got[0].Name != filepath.Base(final) ||
				got[0].Size != wantSize || got[0].Records != wantRecords {
				t.Fatalf("recovered %+v, want %s with size %d and %d records", got, final, wantSize, wantRecords)
			}
			if !got[0].Opened.Equal(openedFromName(got[0].Name)) || got[0].Opened.IsZero() {
				t.Errorf("opened = %v", got[0].Opened)
			}
			st, err := os.Stat(final)
			if err != nil || st.Size() != wantSize {
				t.Fatalf("final file: %v, size %d; want %d", err, st.Size(), wantSize)
			}
			if recs := readAll(t, final, strictOptions()...); int64(len(recs)) != wantRecords {
				t.Errorf("read %d records, want %d", len(recs), wantRecords)
			}
		})
	}
}

// TestRecoverOpenExistingName checks that a file whose final name is taken
// is reported and left alone, while the others are recovered.
func TestRecoverOpenExistingName(t *testing.T) {
	dir := t.TempDir()
	path, _, _ := writeOpenFile(t, dir)
	final := strings.TrimSuffix(path, openSuffix)
	if err := os.WriteFile(final, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "TEST-20250101000000000-00009-testhost.warc.gz")
	if err := os.WriteFile(other+openSuffix, fileBytes(t, path), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := RecoverOpen(dir, nil)
	if err == nil || !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), filepath.Base(path)) {
		t.Errorf("err = %v, want one naming %s and 'already exists'", err, filepath.Base(path))
	}
	if len(got) != 1 || got[0].Path != other {
		t.Errorf("recovered %+v, want only %s", got, other)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("open file with taken name was not left alone: %v", err)
	}
}

func TestRecoverOpenMissingDir(t *testing.T) {
	got, err := RecoverOpen(filepath.Join(t.TempDir(), "none"), nil)
	if err != nil || len(got) != 0 {
		t.Errorf("RecoverOpen(missing dir) = %v, %v; want nothing", got, err)
	}
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func appendBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
