package httpc

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"
)

// maxIdleUnlimited bounds the idle connections kept per host by a Pool
// without a connection limit.
const maxIdleUnlimited = 1024

// Pool shares connections to each host among several Clients (Config.Pool),
// for plans where virtual users model requests over a common connection
// pool instead of one browser each. With a limit, a Client that finds every
// connection busy waits for one (bounded by the request's deadline and
// context), which is queueing inside the generator: use it when that is the
// behaviour under test. A Pool is safe for concurrent use.
type Pool struct {
	max   int
	mu    sync.Mutex
	hosts map[string]*poolHost
}

// NewPool returns a Pool allowing at most maxConnsPerHost connections to
// each host; 0 or less means no limit.
func NewPool(maxConnsPerHost int) *Pool {
	return &Pool{max: max(maxConnsPerHost, 0), hosts: make(map[string]*poolHost)}
}

// poolHost holds one host's idle connections and its connection slots.
type poolHost struct {
	idle chan *conn
	sem  chan struct{} // one token per open connection; nil without a limit
}

// host returns the entry for a connection key.
func (p *Pool) host(key string) *poolHost {
	p.mu.Lock()
	defer p.mu.Unlock()
	ph := p.hosts[key]
	if ph == nil {
		ph = &poolHost{}
		if p.max > 0 {
			ph.idle = make(chan *conn, p.max)
			ph.sem = make(chan struct{}, p.max)
		} else {
			ph.idle = make(chan *conn, maxIdleUnlimited)
		}
		p.hosts[key] = ph
	}
	return ph
}

// get returns an idle connection, or nil when the caller should dial (a
// slot is then held for it). With fresh, an idle connection is not taken.
func (ph *poolHost) get(done <-chan struct{}, deadline time.Time, fresh bool) (*conn, error) {
	if !fresh {
		select {
		case cn := <-ph.idle:
			return cn, nil
		default:
		}
	}
	if ph.sem == nil {
		return nil, nil
	}
	select {
	case ph.sem <- struct{}{}:
		return nil, nil
	default:
	}
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		tm := time.NewTimer(time.Until(deadline))
		defer tm.Stop()
		timeout = tm.C
	}
	idle := ph.idle
	if fresh {
		idle = nil
	}
	select {
	case cn := <-idle:
		return cn, nil
	case ph.sem <- struct{}{}:
		return nil, nil
	case <-done:
		return nil, fmt.Errorf("waiting for a pooled connection: %w", context.Canceled)
	case <-timeout:
		return nil, fmt.Errorf("waiting for a pooled connection: %w", os.ErrDeadlineExceeded)
	}
}

// put parks a reusable connection.
func (ph *poolHost) put(cn *conn) {
	select {
	case ph.idle <- cn:
	default: // only without a limit, past maxIdleUnlimited
		_ = cn.nc.Close()
		ph.release()
	}
}

// release frees the slot of a closed connection.
func (ph *poolHost) release() {
	if ph.sem != nil {
		<-ph.sem
	}
}

// Close closes the idle connections. Connections in use are closed by
// their Clients as usual; the Pool stays usable.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ph := range p.hosts {
		for {
			select {
			case cn := <-ph.idle:
				_ = cn.nc.Close()
				ph.release()
				continue
			default:
			}
			break
		}
	}
	return nil
}

// acquirePooled is acquire for a Client with a Pool.
func (c *Client) acquirePooled(ctx context.Context, t *target, deadline time.Time, fresh bool, res *Result) (*conn, bool, phase, error) {
	ph := t.phost
	if ph == nil {
		ph = c.pool.host(t.key)
		t.phost = ph
	}
	for {
		cn, err := ph.get(ctx.Done(), deadline, fresh)
		if err != nil {
			return nil, false, phaseConnect, err
		}
		if cn == nil {
			t0 := time.Now()
			cn, phs, err := c.dial(ctx, t, deadline)
			res.Connect += time.Since(t0)
			if err != nil {
				ph.release()
				return nil, false, phs, err
			}
			cn.ph = ph
			return cn, false, phaseNone, nil
		}
		if res.Start.Sub(cn.lastUsed) < c.idleProbe || cn.alive() {
			return cn, true, phaseNone, nil
		}
		c.closeConn(cn)
	}
}
