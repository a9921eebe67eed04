package scope

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// DecisionLogOptions tune a DecisionLog. Zero fields take the defaults.
type DecisionLogOptions struct {
	// Buffer is how many lines may wait for the writer (default 65536).
	// When it is full, lines are dropped and counted rather than slowing
	// the crawl down.
	Buffer int
	// FlushInterval is how often buffered lines reach the file (default 1 s).
	FlushInterval time.Duration
	// ExtraInfo adds {"hopPath","via","seed","host"} JSON to each line
	// (Heritrix's logExtraInfo).
	ExtraInfo bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// OnDrop, if set, is called for each dropped line (for a metric).
	OnDrop func()
}

// DecisionLog is Heritrix's scope log (DecideRuleSequence logToFile): one
// line per decision,
//
//	2024-01-17T09:00:00.000Z 3 SurtPrefixedDecideRule ACCEPT http://example.org/ {"hopPath":"L",...}
//
// with the 1-based rule number (0 and "-" when no rule decided). Lines go
// through a bounded queue to a single writer goroutine, so deciding never
// waits for the disk. It is safe for concurrent use.
type DecisionLog struct {
	f       *os.File
	opts    DecisionLogOptions
	lines   chan []byte
	stop    chan struct{}
	done    chan struct{}
	dropped atomic.Int64
	once    sync.Once
	werr    error // first write error, read after done
}

// OpenDecisionLog appends to path, creating it if needed.
func OpenDecisionLog(path string, opts DecisionLogOptions) (*DecisionLog, error) {
	if opts.Buffer <= 0 {
		opts.Buffer = 1 << 16
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open scope log: %w", err)
	}
	l := &DecisionLog{f: f, opts: opts, lines: make(chan []byte, opts.Buffer),
		stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l, nil
}

// Record queues one line; it never blocks.
func (l *DecisionLog) Record(c *Candidate, d Decision) {
	b := make([]byte, 0, 128+len(c.URL))
	b = l.opts.Now().UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(d.Rule), 10)
	b = append(b, ' ')
	if d.RuleName == "" {
		b = append(b, '-')
	}
	b = append(b, d.RuleName...)
	b = append(b, ' ')
	b = append(b, d.Result.String()...)
	b = append(b, ' ')
	b = append(b, c.URL...)
	if l.opts.ExtraInfo {
		extra, _ := json.Marshal(map[string]string{"hopPath": c.HopPath, "via": c.Via, "seed": c.SourceTag, "host": c.host()})
		b = append(b, ' ')
		b = append(b, extra...)
	}
	b = append(b, '\n')
	select {
	case l.lines <- b:
	default:
		l.dropped.Add(1)
		if l.opts.OnDrop != nil {
			l.opts.OnDrop()
		}
	}
}

// Dropped is the number of lines lost to a full queue.
func (l *DecisionLog) Dropped() int64 { return l.dropped.Load() }

func (l *DecisionLog) run() {
	defer close(l.done)
	w := bufio.NewWriterSize(l.f, 64<<10)
	write := func(b []byte) {
		if _, err := w.Write(b); err != nil && l.werr == nil {
			l.werr = err
		}
	}
	t := time.NewTicker(l.opts.FlushInterval)
	defer t.Stop()
	for {
		select {
		case b := <-l.lines:
			write(b)
		case <-t.C:
			if err := w.Flush(); err != nil && l.werr == nil {
				l.werr = err
			}
		case <-l.stop:
			for {
				select {
				case b := <-l.lines:
					write(b)
				default:
					if err := w.Flush(); err != nil && l.werr == nil {
						l.werr = err
					}
					return
				}
			}
		}
	}
}

// Close writes what is queued and closes the file. Lines recorded after
// Close are dropped.
func (l *DecisionLog) Close() error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		err = errors.Join(l.werr, l.f.Close())
		if err != nil {
			err = fmt.Errorf("scope log %s: %w", l.f.Name(), err)
		}
	})
	return err
}
