package server

import (
	"sync"
	"time"
)

// backoff slows down repeated failures from one client: after each
// failure the client's next attempt is delayed twice as long as before,
// from 250 ms up to 8 s, and the count is forgotten 10 minutes after the
// last failure. Other clients are not slowed.
type backoff struct {
	mu      sync.Mutex
	clients map[string]*attempts
}

type attempts struct {
	fails int
	last  time.Time
}

const (
	backoffBase   = 250 * time.Millisecond
	backoffMax    = 8 * time.Second
	backoffForget = 10 * time.Minute
	maxClients    = 4096
)

// Delay returns how long client must wait before its attempt is
// answered.
func (b *backoff) Delay(client string, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.clients[client]
	if a == nil || now.Sub(a.last) > backoffForget {
		return 0
	}
	d := backoffBase << min(a.fails-1, 5)
	return min(d, backoffMax)
}

// Failed records a failure of client; Succeeded forgets its failures.
func (b *backoff) Failed(client string, now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.clients == nil {
		b.clients = map[string]*attempts{}
	}
	a := b.clients[client]
	if a == nil {
		if len(b.clients) >= maxClients {
			for k, v := range b.clients {
				if now.Sub(v.last) > backoffForget || len(b.clients) >= maxClients {
					delete(b.clients, k)
				}
			}
		}
		a = &attempts{}
		b.clients[client] = a
	}
	a.fails++
	a.last = now
	return a.fails
}

// Succeeded forgets client's failures.
func (b *backoff) Succeeded(client string) {
	b.mu.Lock()
	delete(b.clients, client)
	b.mu.Unlock()
}
