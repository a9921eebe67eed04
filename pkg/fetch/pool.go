package fetch

import (
	"net"
	"sync"
	"time"
)

// pool keeps idle keep-alive connections per scheme and authority. Expired
// connections are dropped lazily on get and put, so the pool runs no
// goroutine of its own; a total cap, met by closing the connections idle
// longest, keeps hosts that are never revisited from holding descriptors.
type pool struct {
	mu       sync.Mutex
	idle     map[string][]idleConn
	total    int
	max      int
	maxTotal int
	timeout  time.Duration
	closed   bool
}

type idleConn struct {
	c     net.Conn
	ip    net.IP
	since time.Time
}

func newPool(maxPerKey, maxTotal int, timeout time.Duration) *pool {
	return &pool{idle: map[string][]idleConn{}, max: maxPerKey, maxTotal: maxTotal, timeout: timeout}
}

// get returns the most recently used live connection for key.
func (p *pool) get(key string) (net.Conn, net.IP, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked(key)
	list := p.idle[key]
	if len(list) == 0 {
		return nil, nil, false
	}
	ic := list[len(list)-1]
	p.total--
	p.idle[key] = list[:len(list)-1]
	if len(p.idle[key]) == 0 {
		delete(p.idle, key)
	}
	return ic.c, ic.ip, true
}

// put offers c for reuse; it is closed if the pool is closed. A host at
// its cap gives up its oldest connection; a full pool gives up the oldest
// of all hosts, so the host being crawled now keeps its connections and one
// crawled a while ago loses them.
func (p *pool) put(key string, c net.Conn, ip net.IP) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return
	}
	p.expireLocked(key)
	if len(p.idle[key]) >= p.max {
		p.dropOldestLocked(key)
	}
	if p.total >= p.maxTotal {
		for k := range p.idle {
			p.expireLocked(k)
		}
	}
	if p.total >= p.maxTotal {
		p.dropOldestLocked(p.oldestKeyLocked())
	}
	p.idle[key] = append(p.idle[key], idleConn{c: c, ip: ip, since: time.Now()})
	p.total++
}

// oldestKeyLocked returns the key whose oldest connection has been idle
// longest. Lists are kept oldest first, so only their heads are compared;
// the pool is small enough (maxIdleTotal) for a scan.
func (p *pool) oldestKeyLocked() string {
	var key string
	var since time.Time
	for k, list := range p.idle {
		if key == "" || list[0].since.Before(since) {
			key, since = k, list[0].since
		}
	}
	return key
}

// dropOldestLocked closes key's oldest idle connection.
func (p *pool) dropOldestLocked(key string) {
	list := p.idle[key]
	if len(list) == 0 {
		return
	}
	_ = list[0].c.Close()
	p.total--
	if len(list) == 1 {
		delete(p.idle, key)
		return
	}
	p.idle[key] = list[1:]
}

// expireLocked closes connections idle longer than the timeout.
func (p *pool) expireLocked(key string) {
	list := p.idle[key]
	cut := time.Now().Add(-p.timeout)
	i := 0
	for i < len(list) && list[i].since.Before(cut) {
		_ = list[i].c.Close()
		i++
	}
	p.total -= i
	if i == len(list) {
		delete(p.idle, key)
		return
	}
	p.idle[key] = list[i:]
}

// closeAll closes every idle connection and refuses new ones.
func (p *pool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for key, list := range p.idle {
		for _, ic := range list {
			_ = ic.c.Close()
		}
		delete(p.idle, key)
	}
	p.total = 0
}
