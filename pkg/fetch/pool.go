package fetch

import (
	"net"
	"sync"
	"time"
)

// pool keeps idle keep-alive connections per scheme and authority. Expired
// connections are dropped lazily on get and put, so the pool runs no
// goroutine of its own; a total cap keeps hosts that are never revisited
// from holding descriptors.
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

// put offers c for reuse; it is closed if the pool is closed or full.
func (p *pool) put(key string, c net.Conn, ip net.IP) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return
	}
	p.expireLocked(key)
	if p.total >= p.maxTotal {
		for k := range p.idle {
			p.expireLocked(k)
		}
	}
	list := p.idle[key]
	if len(list) >= p.max {
		_ = list[0].c.Close()
		list = list[1:]
		p.total--
	}
	if p.total >= p.maxTotal {
		_ = c.Close()
		return
	}
	p.idle[key] = append(list, idleConn{c: c, ip: ip, since: time.Now()})
	p.total++
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
