package warcwriter

import (
	"bytes"
	"testing"

	"github.com/nlnwa/gowarc"
)

// TestMarshalMatchesGowarc holds the slot's marshal to gowarc's marshaler,
// byte for byte, for every kind of record the writer makes, in each WARC
// version.
func TestMarshalMatchesGowarc(t *testing.T) {
	for _, vc := range versionCases() {
		t.Run(vc.name(), func(t *testing.T) { marshalMatchesGowarc(t, vc) })
	}
}

func marshalMatchesGowarc(t *testing.T, vc versionCase) {
	cfg := testConfig(t.TempDir())
	cfg.Version = vc.setting
	w, _ := newTestWriter(t, cfg)
	date := newFakeClock().Now()
	capture := func(chunked bool, revisit bool) []gowarc.WarcRecord {
		f := newFetch("http://example.com/p?q=1", date, body(3, 20_000), chunked)
		f.c.Metadata = &Metadata{Via: "http://example.com/", HopsFromSeed: "LL", SourceTag: "src",
			FetchTimeMs: 12, Outlinks: []Outlink{{URL: "http://example.com/a b", Hop: "L", Context: "a/@href"}}}
		if revisit {
			f.c.Revisit = &Revisit{RefersToURI: f.c.URL, RefersToDate: date, RefersToRecordID: "<urn:uuid:x>"}
		}
		recs, err := w.buildCapture(&f.c)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	info, err := w.build.warcinfo(&w.cfg, "x.warc.gz", date)
	if err != nil {
		t.Fatal(err)
	}
	dns, err := w.build.dns("example.com", date, "192.0.2.1", []byte("20240101000000\nexample.com. 300 IN A 192.0.2.10\n"))
	if err != nil {
		t.Fatal(err)
	}
	recs := []gowarc.WarcRecord{info, dns}
	recs = append(recs, capture(false, false)...)
	recs = append(recs, capture(true, false)...)
	recs = append(recs, capture(false, true)...)
	for _, rec := range recs {
		var want bytes.Buffer
		if _, _, err := gowarc.NewMarshaler().Marshal(&want, rec, 0); err != nil {
			t.Fatalf("gowarc marshal %s: %v", rec.Type(), err)
		}
		var got bytes.Buffer
		m := marshaler{buf: make([]byte, 100)} // a small buffer: several copies
		if err := m.marshal(&got, rec); err != nil {
			t.Fatalf("marshal %s: %v", rec.Type(), err)
		}
		if !bytes.HasPrefix(got.Bytes(), []byte(vc.line+"\r\n")) {
			t.Errorf("%s record starts %q, want %s", rec.Type(), got.Bytes()[:min(got.Len(), 10)], vc.line)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s record: marshal wrote\n%q\ngowarc writes\n%q", rec.Type(), got.Bytes(), want.Bytes())
		}
		_ = rec.Close()
	}
}
