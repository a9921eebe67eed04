package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Frames builds a server's byte stream with a Framer, for fuzz seeds.
func h2Frames(write func(fr *http2.Framer, block func(pairs ...string) []byte)) []byte {
	var b bytes.Buffer
	fr := http2.NewFramer(&b, nil)
	block := func(pairs ...string) []byte {
		var hb bytes.Buffer
		enc := hpack.NewEncoder(&hb)
		for i := 0; i+1 < len(pairs); i += 2 {
			_ = enc.WriteField(hpack.HeaderField{Name: pairs[i], Value: pairs[i+1]})
		}
		return hb.Bytes()
	}
	write(fr, block)
	return b.Bytes()
}

// FuzzH2Response feeds arbitrary server bytes to the HTTP/2 exchange: it
// must end (the pipe closes after the bytes) with a Response whose Raw is
// in HTTP/1.1 form and whose Payload and digest agree, or with a classified
// *Error; never a panic or a hang.
func FuzzH2Response(f *testing.F) {
	f.Add(h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
		_ = fr.WriteSettings()
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, EndHeaders: true,
			BlockFragment: block(":status", "200", "content-type", "text/html", "content-length", "5")})
		_ = fr.WriteData(1, true, []byte("hello"))
	}))
	f.Add(h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
		_ = fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 20000})
		_ = fr.WritePing(false, [8]byte{1})
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(":status", "103", "link", "<x>")[:3]})
		_ = fr.WriteContinuation(1, true, block(":status", "103", "link", "<x>")[3:])
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, EndHeaders: true, BlockFragment: block(":status", "404")})
		_ = fr.WriteData(1, false, []byte("part"))
		_ = fr.WriteGoAway(1, http2.ErrCodeNo, nil)
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, EndHeaders: true, EndStream: true, BlockFragment: block("x-t", "1")})
	}))
	f.Add(h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
		_ = fr.WriteSettings()
		_ = fr.WriteRSTStream(1, http2.ErrCodeRefusedStream)
	}))
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\n"))
	f.Add([]byte{})
	fe := New(Config{SpoolDir: f.TempDir(), ReadTimeout: 2 * time.Second, TotalTimeout: 5 * time.Second,
		MaxLengthBytes: 1 << 16, UserAgent: "fuzz"}, nil)
	f.Fuzz(func(t *testing.T, server []byte) {
		client, srv := net.Pipe()
		go func() {
			go func() { _, _ = io.Copy(io.Discard, srv) }()
			_, _ = srv.Write(server)
			_ = srv.Close()
		}()
		tgt, err := parseTarget("https://site.test/")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		p := fetchPlan{req: Request{URL: "https://site.test/"}, target: tgt, method: "GET",
			deadline: start.Add(5 * time.Second), limits: fe.limits(Request{})}
		spec := reqSpec{method: "GET", requestTarget: "/", hostHeader: "site.test", userAgent: "fuzz", keepAlive: true}
		resp, err := fe.roundTripH2(context.Background(), &conn{Conn: client}, p, spec, start)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status >= 0 {
				t.Fatalf("error %v is not a classified fetch failure", err)
			}
			return
		}
		defer func() { _ = resp.Close() }()
		raw, _ := io.ReadAll(resp.Raw.NewReader())
		payload, _ := io.ReadAll(resp.Payload.NewReader())
		if !strings.HasPrefix(string(raw), "HTTP/1.1 ") || !bytes.HasSuffix(raw, payload) || sha1Digest(payload) != resp.PayloadDigest {
			t.Fatalf("raw %.200q payload %.100q digest %s", raw, payload, resp.PayloadDigest)
		}
	})
}
