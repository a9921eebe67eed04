// Package rdbsync takes a point-in-time copy of a running Redis server over
// its replication protocol, as `redis-cli --rdb` does: it authenticates,
// asks for a full resynchronisation and keeps the RDB snapshot the server
// streams, without any access to the server's file system. The snapshot is
// the state at the moment the server forked for it, so it is consistent
// across every key, whatever the clients write meanwhile.
//
// The handshake (Redis replication protocol): optional AUTH, REPLCONF
// rdb-only 1 (Redis 7+, so the server does not follow the snapshot with its
// command stream; older servers refuse it, which is harmless), then
// PSYNC ? -1, answered +FULLRESYNC <replid> <offset>, newlines while the
// server saves, and the payload either as a bulk string ($<len>\r\n and
// len bytes, disk-based replication) or in the diskless form
// ($EOF:<40-byte mark>\r\n, the RDB, then the mark again).
package rdbsync

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// ErrRefused wraps the server's error reply when it will not replicate to
// us (no permission for PSYNC/SYNC, a renamed or disabled command, a
// replica that is loading).
var ErrRefused = errors.New("redis refused replication")

// ErrCorrupt wraps errors about a payload that is not a whole RDB file.
var ErrCorrupt = errors.New("corrupt rdb")

// eofMarkLen is the length of the diskless form's end mark
// (RDB_EOF_MARK_SIZE in redis's replication.c).
const eofMarkLen = 40

// Options says how to reach the server.
type Options struct {
	// Addr is host:port of the server (a master, for Redis Cluster one
	// call per master).
	Addr string
	// Username and Password authenticate (AUTH); empty Password: none.
	Username, Password string
	// TLS, when set, wraps the connection.
	TLS *tls.Config
	// DialTimeout bounds the connection; zero: 10s.
	DialTimeout time.Duration
	// Diskless announces REPLCONF capa eof, so a master configured with
	// repl-diskless-sync streams the snapshot from its fork without
	// writing dump.rdb (the payload then comes in the $EOF form). A master
	// without that setting still saves to disk first.
	Diskless bool
	// OnFork, when set, is called once the server has answered
	// FULLRESYNC: it has forked, so the snapshot's moment has passed
	// (redis sends FULLRESYNC after starting the save it will send).
	OnFork func()
	// IdleTimeout bounds each wait for bytes from the server, including
	// the wait while it writes the snapshot to disk, during which it sends
	// a newline every second; zero: 60s.
	IdleTimeout time.Duration
}

// Info describes one snapshot.
type Info struct {
	// Addr is the server the snapshot came from.
	Addr string
	// ReplID and Offset are the replication id and offset the server
	// answered +FULLRESYNC with: the snapshot's position in its history.
	ReplID string
	Offset int64
	// Diskless reports the $EOF form.
	Diskless bool
	// Size is the RDB's length in bytes.
	Size int64
	// RDBVersion is the format version from the file's header (e.g. 10
	// for Redis 7.0).
	RDBVersion int
	// Checksum is the CRC64 the file ends with; zero when the server runs
	// with rdbchecksum no.
	Checksum uint64
	// Took is how long the transfer took, handshake included.
	Took time.Duration
}

// Fetch takes a snapshot of the server and writes the RDB to w. The file is
// checked as it streams (header, end opcode and CRC64), so an error means w
// holds no usable snapshot.
func Fetch(ctx context.Context, o Options, w io.Writer) (Info, error) {
	start := time.Now()
	info := Info{Addr: o.Addr}
	dialTimeout := cmpOr(o.DialTimeout, 10*time.Second)
	idle := cmpOr(o.IdleTimeout, 60*time.Second)
	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "tcp", o.Addr)
	if err != nil {
		return info, fmt.Errorf("rdb snapshot of %s: connect: %w", o.Addr, err)
	}
	if o.TLS != nil {
		conn = tls.Client(conn, o.TLS)
	}
	defer func() { _ = conn.Close() }()
	// Closing the connection is how a cancelled context interrupts a
	// blocked read.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	c := &session{conn: conn, r: bufio.NewReaderSize(conn, 64<<10), idle: idle, addr: o.Addr}

	if o.Password != "" {
		args := []string{"AUTH", o.Password}
		if o.Username != "" {
			args = []string{"AUTH", o.Username, o.Password}
		}
		if err := c.command(args...); err != nil {
			return info, c.wrap(ctx, "AUTH", err)
		}
		if _, err := c.status(); err != nil {
			return info, c.wrap(ctx, "AUTH", err)
		}
	}
	// rdb-only: Redis 7 then ends the replication after the snapshot
	// instead of streaming the write commands that follow. An older
	// server's error is not a reason to stop.
	if err := c.command("REPLCONF", "rdb-only", "1"); err != nil {
		return info, c.wrap(ctx, "REPLCONF", err)
	}
	if _, err := c.status(); err != nil && !errors.Is(err, ErrRefused) {
		return info, c.wrap(ctx, "REPLCONF", err)
	}
	if o.Diskless {
		if err := c.command("REPLCONF", "capa", "eof"); err != nil {
			return info, c.wrap(ctx, "REPLCONF", err)
		}
		if _, err := c.status(); err != nil {
			return info, c.wrap(ctx, "REPLCONF capa eof", err)
		}
	}
	if err := c.command("PSYNC", "?", "-1"); err != nil {
		return info, c.wrap(ctx, "PSYNC", err)
	}
	line, err := c.status()
	if err != nil {
		return info, c.wrap(ctx, "PSYNC", err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "FULLRESYNC" {
		return info, fmt.Errorf("rdb snapshot of %s: PSYNC answered %q, want FULLRESYNC <replid> <offset>", o.Addr, line)
	}
	info.ReplID = f[1]
	info.Offset, _ = strconv.ParseInt(f[2], 10, 64)
	if o.OnFork != nil {
		o.OnFork()
	}

	hdr, err := c.bulkHeader()
	if err != nil {
		return info, c.wrap(ctx, "snapshot header", err)
	}
	ck := newChecker()
	dst := io.MultiWriter(w, ck)
	if mark, ok := strings.CutPrefix(hdr, "$EOF:"); ok {
		if len(mark) != eofMarkLen {
			return info, fmt.Errorf("rdb snapshot of %s: diskless header %q: mark of %d bytes, want %d", o.Addr, hdr, len(mark), eofMarkLen)
		}
		info.Diskless = true
		info.Size, err = c.copyUntilMark(dst, []byte(mark))
	} else {
		n, perr := strconv.ParseInt(strings.TrimPrefix(hdr, "$"), 10, 64)
		if !strings.HasPrefix(hdr, "$") || perr != nil || n < 0 {
			return info, fmt.Errorf("rdb snapshot of %s: bad payload header %q", o.Addr, hdr)
		}
		info.Size, err = c.copyN(dst, n)
	}
	if err != nil {
		return info, c.wrap(ctx, fmt.Sprintf("snapshot payload at byte %d", info.Size), err)
	}
	if info.RDBVersion, info.Checksum, err = ck.finish(); err != nil {
		return info, fmt.Errorf("rdb snapshot of %s (%d bytes): %w", o.Addr, info.Size, err)
	}
	info.Took = time.Since(start)
	return info, nil
}

// session is one connection's protocol state.
type session struct {
	conn net.Conn
	r    *bufio.Reader
	idle time.Duration
	addr string
}

// command writes one command as a RESP array.
func (s *session) command(args ...string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_ = s.conn.SetWriteDeadline(time.Now().Add(s.idle))
	_, err := s.conn.Write(b.Bytes())
	return err
}

// line reads one CRLF-terminated line.
func (s *session) line() (string, error) {
	_ = s.conn.SetReadDeadline(time.Now().Add(s.idle))
	l, err := s.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(l, "\r\n"), nil
}

// status reads a simple-string reply; an error reply wraps ErrRefused.
func (s *session) status() (string, error) {
	l, err := s.line()
	if err != nil {
		return "", err
	}
	switch {
	case strings.HasPrefix(l, "+"):
		return l[1:], nil
	case strings.HasPrefix(l, "-"):
		return "", fmt.Errorf("%w: %s", ErrRefused, l[1:])
	}
	return "", fmt.Errorf("unexpected reply %q", l)
}

// bulkHeader skips the newlines a server sends while it saves and returns
// the payload's header line.
func (s *session) bulkHeader() (string, error) {
	for {
		l, err := s.line()
		if err != nil {
			return "", err
		}
		switch {
		case l == "":
			continue // keep-alive while the server forks and saves
		case strings.HasPrefix(l, "-"):
			return "", fmt.Errorf("%w: %s", ErrRefused, l[1:])
		}
		return l, nil
	}
}

// copyN copies exactly n payload bytes.
func (s *session) copyN(w io.Writer, n int64) (int64, error) {
	var done int64
	buf := make([]byte, 64<<10)
	for done < n {
		_ = s.conn.SetReadDeadline(time.Now().Add(s.idle))
		k, err := s.r.Read(buf[:min(int64(len(buf)), n-done)])
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return done, werr
			}
			done += int64(k)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: connection closed after %d of %d bytes", ErrCorrupt, done, n)
			}
			return done, err
		}
	}
	return done, nil
}

// copyUntilMark copies the diskless payload, holding back the last
// len(mark) bytes read until more arrive, and stops at the mark.
func (s *session) copyUntilMark(w io.Writer, mark []byte) (int64, error) {
	var done int64
	held := make([]byte, 0, 2*len(mark)+64<<10)
	buf := make([]byte, 64<<10)
	for {
		_ = s.conn.SetReadDeadline(time.Now().Add(s.idle))
		k, err := s.r.Read(buf)
		held = append(held, buf[:k]...)
		if len(held) >= len(mark) && bytes.Equal(held[len(held)-len(mark):], mark) {
			// The server sends nothing after the mark until we answer, so
			// the mark is the end of what we read.
			out := held[:len(held)-len(mark)]
			if _, werr := w.Write(out); werr != nil {
				return done, werr
			}
			return done + int64(len(out)), nil
		}
		if keep := len(mark); len(held) > keep {
			if _, werr := w.Write(held[:len(held)-keep]); werr != nil {
				return done, werr
			}
			done += int64(len(held) - keep)
			held = append(held[:0], held[len(held)-keep:]...)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: connection closed after %d bytes, before the end mark", ErrCorrupt, done)
			}
			return done, err
		}
	}
}

// wrap names the step and the server; a cancelled context wins over the
// closed-connection error it caused.
func (s *session) wrap(ctx context.Context, step string, err error) error {
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return fmt.Errorf("rdb snapshot of %s: %s: %w", s.addr, step, err)
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// crcTable is CRC-64/Jones, the checksum redis appends to RDB files
// (src/crc64.c: reflected polynomial 0xad93d23594c935a9, initial value 0,
// no final xor).
var crcTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

// checker follows the stream to check the RDB's header and, at the end, its
// EOF opcode and CRC64 over everything before the checksum.
type checker struct {
	head []byte // first 9 bytes
	tail []byte // last 9 bytes: EOF opcode and checksum
	crc  uint64 // over bytes that left tail
	n    int64
}

func newChecker() *checker { return &checker{} }

// Write implements io.Writer.
func (c *checker) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if len(c.head) < 9 {
		c.head = append(c.head, p[:min(len(p), 9-len(c.head))]...)
	}
	c.tail = append(c.tail, p...)
	if over := len(c.tail) - 9; over > 0 {
		c.crc = crcUpdate(c.crc, c.tail[:over])
		c.tail = append(c.tail[:0], c.tail[over:]...)
	}
	return len(p), nil
}

// finish checks the whole file and returns its format version and checksum.
func (c *checker) finish() (version int, sum uint64, err error) {
	if len(c.head) < 9 || string(c.head[:5]) != "REDIS" {
		return 0, 0, fmt.Errorf("%w: no REDIS header (got %q)", ErrCorrupt, c.head)
	}
	version, err = strconv.Atoi(string(c.head[5:9]))
	if err != nil {
		return 0, 0, fmt.Errorf("%w: header %q: bad version", ErrCorrupt, c.head)
	}
	if len(c.tail) < 9 || c.n < 18 || c.tail[0] != 0xff {
		return version, 0, fmt.Errorf("%w: %d bytes: no end-of-file opcode before the checksum (truncated)", ErrCorrupt, c.n)
	}
	crc := crcUpdate(c.crc, c.tail[:1])
	for i := 8; i >= 1; i-- {
		sum = sum<<8 | uint64(c.tail[i])
	}
	if sum != 0 && sum != crc {
		return version, sum, fmt.Errorf("%w: %d bytes: checksum %016x, computed %016x", ErrCorrupt, c.n, sum, crc)
	}
	return version, sum, nil
}

// crcUpdate continues redis's CRC64 (initial 0, no final xor) over p.
// hash/crc64 inverts before and after, so invert around it.
func crcUpdate(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, crcTable, p)
}

// CheckFile checks that r holds one whole RDB file: header, end opcode and
// checksum. It returns the format version.
func CheckFile(r io.Reader) (version int, size int64, err error) {
	ck := newChecker()
	n, err := io.Copy(ck, r)
	if err != nil {
		return 0, n, err
	}
	version, _, err = ck.finish()
	return version, n, err
}
