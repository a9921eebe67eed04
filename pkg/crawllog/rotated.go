package crawllog

import (
	"sync"
	"time"
)

// Rotated is a crawl log file renamed aside by rotation.
type Rotated struct {
	// Path is the rotated file, Dir/Name.yyyyMMddHHmmss[-n].
	Path string
	// Size is its size in bytes after the rename.
	Size int64
	// At is the rotation instant its name carries: the midnight UTC that
	// ended the day it holds.
	At time.Time
}

// rotatedQueue hands rotated files to Options.OnRotate from its own
// goroutine: rotation happens under the Writer's lock, and OnRotate may
// take a while (a Kafka produce), which must not hold up crawl.log lines.
type rotatedQueue struct {
	fn func(Rotated) // nil: nothing is queued or started

	mu      sync.Mutex
	pending []Rotated
	wake    chan struct{} // cap 1: work is pending
	stop    chan struct{}
	done    chan struct{}
}

func (q *rotatedQueue) init(fn func(Rotated)) {
	if fn == nil {
		return
	}
	q.fn = fn
	q.wake, q.stop, q.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go q.run()
}

// add queues r; it never blocks.
func (q *rotatedQueue) add(r Rotated) {
	if q.fn == nil {
		return
	}
	q.mu.Lock()
	q.pending = append(q.pending, r)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default: // already signalled
	}
}

func (q *rotatedQueue) run() {
	defer close(q.done)
	for {
		select {
		case <-q.wake:
			q.drain()
		case <-q.stop:
			q.drain() // every rotation is handed over before Close returns
			return
		}
	}
}

func (q *rotatedQueue) drain() {
	for {
		q.mu.Lock()
		batch := q.pending
		q.pending = nil
		q.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		for _, r := range batch {
			q.fn(r)
		}
	}
}

// close hands over what is pending and stops the goroutine.
func (q *rotatedQueue) close() {
	if q.fn == nil {
		return
	}
	close(q.stop)
	<-q.done
}
