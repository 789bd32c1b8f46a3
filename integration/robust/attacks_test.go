//go:build robust

package robust

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/ua"
)

// run starts a gateway and an observer, runs attack for the window, stops
// it and checks the bounds. attack gets a stop channel and runs until it
// is closed; before, it may prepare (that time is not observed): it
// calls ready once the attack is under way. It returns the gateway, still
// running, for the caller's own checks.
func run(t *testing.T, name string, attack func(g *gateway, ready func(), stop <-chan struct{})) *gateway {
	g := startGateway(t)
	o := newObserver(t, g)
	time.Sleep(time.Second) // the scan and the simulator warm up
	base := g.rss(t)
	stop := make(chan struct{})
	started := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	go func() {
		defer close(done)
		attack(g, func() { once.Do(func() { close(started) }) }, stop)
	}()
	select {
	case <-started:
	case <-done:
		g.errorf(t, "the attack ended before it started")
		t.FailNow()
	}
	o.start(t)
	time.Sleep(window(t))
	r := o.finish(t)
	close(stop)
	<-done
	after := g.settle(t, base)
	check(t, g, name, base, after, r)
	return g
}

// once runs f when n reaches want, unless stop is closed first.
func once(n *atomic.Int32, want int, stop <-chan struct{}, f func()) {
	for n.Load() < int32(want) {
		select {
		case <-stop:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	f()
}

// attackers runs n copies of one attacker until stop is closed.
func attackers(n int, stop <-chan struct{}, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// open connects with Hello and OpenSecureChannel, and with session,
// CreateSession and ActivateSession too. The connection closes when stop
// is closed; the caller closes it with the returned func.
func open(addr string, session bool, stop <-chan struct{}) (*uaclient.Client, func(), error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, nil, err
	}
	closed := make(chan struct{})
	go func() {
		select {
		case <-stop:
		case <-closed:
		}
		nc.Close()
	}()
	var once sync.Once
	done := func() { once.Do(func() { close(closed) }) }
	c := uaclient.New(nc, "opc.tcp://"+addr)
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if session {
		err = c.Handshake("attacker")
	} else if err = c.Hello(); err == nil {
		err = c.OpenSecureChannel()
	}
	nc.SetDeadline(time.Time{})
	if err != nil {
		done()
		return nil, nil, err
	}
	return c, done, nil
}

// pause waits d or until stop is closed.
func pause(stop <-chan struct{}, d time.Duration) {
	select {
	case <-stop:
	case <-time.After(d):
	}
}

// sendMessage writes msg (a service message: type id and body) as MSG
// chunks of the largest size the server accepts.
func sendMessage(c *uaclient.Client, msg []byte) error {
	tpl, err := c.Template(&ua.ReadRequest{})
	if err != nil {
		return err
	}
	room := c.MaxChunk() - uaclient.MsgHeaderLen
	reqID := c.NextRequestID()
	chunk := make([]byte, 0, c.MaxChunk())
	for len(msg) > 0 {
		n := min(room, len(msg))
		chunk = append(chunk[:0], tpl[:uaclient.MsgHeaderLen]...)
		chunk[3] = 'C'
		if n == len(msg) {
			chunk[3] = 'F'
		}
		chunk = append(chunk, msg[:n]...)
		binary.LittleEndian.PutUint32(chunk[4:], uint32(len(chunk)))
		c.StampChunk(chunk, reqID)
		if _, err := c.Conn().Write(chunk); err != nil {
			return err
		}
		msg = msg[n:]
	}
	return nil
}

// hugeMessage is a 16 MiB message of a service edged does not have.
func hugeMessage() []byte {
	msg := make([]byte, 16<<20)
	msg[0], msg[1] = 0x01, 0x00                    // four-byte NodeId, namespace 0
	binary.LittleEndian.PutUint16(msg[2:], 0xfff0) // no such service
	return msg
}

// bigMessages is the memory attack: conns connections each send 16 MiB
// messages, again and again, reading and dropping what comes back.
func bigMessages(conns int, session bool) func(*gateway, func(), <-chan struct{}) {
	return func(g *gateway, ready func(), stop <-chan struct{}) {
		msg := hugeMessage()
		var sent atomic.Int32
		go once(&sent, conns, stop, ready)
		attackers(conns, stop, func(int) {
			c, done, err := open(g.addr, session, stop)
			if err != nil {
				pause(stop, 100*time.Millisecond)
				return
			}
			defer done()
			go io.Copy(io.Discard, c.Conn())
			sent.Add(1) // under way: edged may refuse the message at its first chunk
			for sendMessage(c, msg) == nil {
			}
		})
	}
}

func TestBigMessagesWithoutSession(t *testing.T) {
	run(t, "98 connections without a session sending 16 MiB messages", bigMessages(98, false))
}

func TestBigMessagesWithSession(t *testing.T) {
	run(t, "98 sessions sending 16 MiB messages", bigMessages(98, true))
}

// TestReadFlood: 20 sessions send Reads of 900,000 nodes, again and again.
func TestReadFlood(t *testing.T) {
	run(t, "20 sessions reading 900,000 nodes", func(g *gateway, ready func(), stop <-chan struct{}) {
		req := ua.ReadRequest{NodesToRead: make([]ua.ReadValueID, 900000)}
		for i := range req.NodesToRead {
			req.NodesToRead[i] = ua.ReadValueID{NodeID: counterNode, AttributeID: uint32(ua.AttributeIDValue)}
		}
		msg := ua.AppendMessage(nil, &req)
		var sent atomic.Int32
		go once(&sent, 20, stop, ready)
		attackers(20, stop, func(int) {
			c, done, err := open(g.addr, true, stop)
			if err != nil {
				pause(stop, 100*time.Millisecond)
				return
			}
			defer done()
			sent.Add(1)
			for {
				if err := sendMessage(c, msg); err != nil {
					return
				}
				if _, _, err := c.ReadMessage(); err != nil {
					return
				}
			}
		})
	})
}

// newcomers checks, every 100 ms until stop, that a new client can
// connect, create and activate a session, and close it again; it reports
// the attempts and failures and the p99 of the handshake.
type newcomers struct {
	tries, fails atomic.Int32
	mu           sync.Mutex
	lat          []time.Duration
	lastErr      error
}

func (n *newcomers) run(addr string, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
		n.tries.Add(1)
		t0 := time.Now()
		c, err := uaclient.DialSession(addr, "newcomer", 5*time.Second)
		if err == nil {
			err = c.Close(5 * time.Second)
		}
		d := time.Since(t0)
		n.mu.Lock()
		if err != nil {
			n.fails.Add(1)
			n.lastErr = err
		} else {
			n.lat = append(n.lat, d)
		}
		n.mu.Unlock()
	}
}

func (n *newcomers) check(t *testing.T, g *gateway, name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	t.Logf("%s: %d new clients tried, %d failed; handshake p99 %v", name, n.tries.Load(), n.fails.Load(), kit.Percentile(n.lat, 99))
	if n.tries.Load() == 0 || n.fails.Load() > 0 {
		g.errorf(t, "%s: %d of %d new clients were not admitted (last: %v)", name, n.fails.Load(), n.tries.Load(), n.lastErr)
	}
}

// hold is the lock-out attack: conns connections open a channel (and
// with session a session they never activate) and then say nothing,
// opening again when edged closes them.
func hold(t *testing.T, name string, conns int, session bool) {
	var nc newcomers
	g := run(t, name, func(g *gateway, ready func(), stop <-chan struct{}) {
		var opened atomic.Int32
		go once(&opened, conns, stop, func() {
			ready()
			nc.run(g.addr, stop)
		})
		attackers(conns, stop, func(int) {
			c, done, err := open(g.addr, false, stop)
			if err != nil {
				pause(stop, 50*time.Millisecond)
				return
			}
			defer done()
			if session {
				var resp ua.CreateSessionResponse
				err := c.Call(&ua.CreateSessionRequest{RequestHeader: c.Header(), SessionName: "unactivated",
					ClientDescription:       ua.ApplicationDescription{ApplicationURI: "urn:attacker", ApplicationType: ua.ApplicationTypeClient},
					RequestedSessionTimeout: 0}, &resp)
				if err != nil {
					pause(stop, 50*time.Millisecond)
					return
				}
			}
			opened.Add(1)
			_, err = c.ReadChunk() // until edged closes the connection
			if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
				pause(stop, 10*time.Millisecond)
			}
		})
	})
	nc.check(t, g, name)
}

func TestUnactivatedSessions(t *testing.T) {
	hold(t, "100 sessions never activated", 100, true)
}

func TestIdleChannels(t *testing.T) {
	hold(t, "110 channels without a session", 110, false)
}

// TestQuiet is the control: the observer alone, no attack.
func TestQuiet(t *testing.T) {
	run(t, "no attack", func(g *gateway, ready func(), stop <-chan struct{}) {
		ready()
		<-stop
	})
}
