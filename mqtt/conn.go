// Package mqtt is a small MQTT 3.1.1 client for edged's northbound: one
// connection to one broker, QoS 0 publishes appended to a buffer and
// written in batches without allocating, the will, subscriptions, and
// PINGREQ as the mark of what the broker has read (a broker answers a
// connection's packets in order, so its PINGRESP says it took every
// packet sent before the PINGREQ). Failover between brokers and
// reconnection are the caller's. Why not paho: docs/sparkplug.md.
package mqtt

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Message is a will.
type Message struct {
	Topic   string
	Payload []byte
	QoS     byte // 0 or 1
	Retain  bool
}

// Options configure a connection.
type Options struct {
	ClientID string
	Username string
	Password []byte // nil: none
	// KeepAlive is the keep-alive the broker is told (whole seconds); a
	// PINGREQ goes out when nothing else did for three quarters of it, and
	// the connection is dropped when a PINGREQ stays unanswered for half
	// of it. 0: no keep-alive.
	KeepAlive time.Duration
	Will      *Message
	// TLS configures the ssl://, tls:// and mqtts:// URLs (nil: the
	// system's roots, the URL's host as the server name).
	TLS *tls.Config
	// Window bounds the PINGREQs in flight that Mark sends (0: 64): Mark
	// sends none while the window is full, so that the packets of the next
	// ones share the next mark.
	Window int
	// MaxPacket bounds the packets the broker may send (0: 1 MiB).
	MaxPacket int
	// Handler is called, on the connection's reading goroutine, with each
	// message the broker delivers; topic and payload are valid during the
	// call only.
	Handler func(topic string, payload []byte)
}

// ConnectError is the refusal of a CONNECT (CONNACK return code).
type ConnectError byte

func (e ConnectError) Error() string {
	texts := [...]string{1: "unacceptable protocol version", 2: "identifier rejected", 3: "server unavailable", 4: "bad user name or password", 5: "not authorized"}
	if int(e) < len(texts) && texts[e] != "" {
		return "mqtt: connection refused: " + texts[e]
	}
	return fmt.Sprintf("mqtt: connection refused (return code %d)", byte(e))
}

// ErrClosed is the error of a connection closed by Close.
var ErrClosed = errors.New("mqtt: connection closed")

// Conn is a connection to a broker. Publish, Mark and Flush may be called
// from any goroutine.
type Conn struct {
	nc  net.Conn
	opt Options

	mu      sync.Mutex
	out     []byte
	nextID  uint16
	err     error // sticky: the first error, after which nothing is sent
	pings   []int64
	lastOut int64 // when a packet was last written, Unix ns

	marks     atomic.Uint64 // PINGREQs sent
	confirmed atomic.Uint64 // PINGRESPs received
	subacks   chan []byte
	pongs     chan struct{} // a PINGRESP came (for WaitConfirmed)
	done      chan struct{}
	closeOnce sync.Once
}

// Dial connects to the broker at rawURL (tcp://, mqtt://, ssl://,
// tls:// or mqtts://; the port defaults to 1883, or 8883 with TLS) and
// sends CONNECT; it returns once the broker accepted it.
func Dial(ctx context.Context, rawURL string, o Options) (*Conn, error) {
	addr, tlsConf, err := target(rawURL, o.TLS)
	if err != nil {
		return nil, err
	}
	pkt, err := connectPacket(&o)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if tlsConf != nil {
		tl := tls.Client(nc, tlsConf)
		if err := tl.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("mqtt: TLS with %s: %w", addr, err)
		}
		nc = tl
	}
	if _, err := nc.Write(pkt); err != nil {
		nc.Close()
		return nil, err
	}
	r := bufio.NewReaderSize(nc, 4096)
	var buf []byte
	h, body, err := readPacket(r, &buf, 4)
	if err == nil && (h != tConnack<<4 || len(body) != 2) {
		err = fmt.Errorf("%w: the broker answered CONNECT with packet type %d", ErrProtocol, h>>4)
	}
	if err != nil {
		nc.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if body[1] != 0 {
		nc.Close()
		return nil, ConnectError(body[1])
	}
	if !stop() {
		nc.Close()
		return nil, ctx.Err()
	}
	nc.SetDeadline(time.Time{})
	if o.Window <= 0 {
		o.Window = 64
	}
	if o.MaxPacket <= 0 {
		o.MaxPacket = 1 << 20
	}
	c := &Conn{nc: nc, opt: o, subacks: make(chan []byte, 1), pongs: make(chan struct{}, 1), done: make(chan struct{}),
		pings: make([]int64, 0, o.Window+1), lastOut: time.Now().UnixNano()}
	go c.read(r)
	if o.KeepAlive > 0 {
		go c.keepAlive()
	}
	return c, nil
}

// target is the address and TLS configuration of a broker URL.
func target(rawURL string, base *tls.Config) (string, *tls.Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", nil, fmt.Errorf("mqtt: broker URL %q: %w", rawURL, err)
	}
	var secure bool
	switch u.Scheme {
	case "tcp", "mqtt":
	case "ssl", "tls", "mqtts":
		secure = true
	default:
		return "", nil, fmt.Errorf("mqtt: broker URL %q: the scheme is not tcp, mqtt, ssl, tls or mqtts", rawURL)
	}
	if u.Hostname() == "" || u.Path != "" && u.Path != "/" {
		return "", nil, fmt.Errorf("mqtt: broker URL %q: want scheme://host[:port]", rawURL)
	}
	port := u.Port()
	if port == "" {
		port = "1883"
		if secure {
			port = "8883"
		}
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	if !secure {
		return addr, nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if base != nil {
		tc = base.Clone()
		if tc.MinVersion < tls.VersionTLS12 {
			tc.MinVersion = tls.VersionTLS12
		}
	}
	if tc.ServerName == "" {
		tc.ServerName = u.Hostname()
	}
	return addr, tc, nil
}

// fail records err as the connection's error (the first one sticks) and
// closes it.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	c.closeOnce.Do(func() {
		c.nc.Close()
		close(c.done)
	})
}

// Done is closed when the connection ended; Err says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is the error that ended the connection, nil while it lives.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Publish appends a QoS 0 PUBLISH to the buffer that Flush writes, and
// writes the buffer once it holds flushAt bytes. It returns the number of
// the PINGREQ that will follow it (see Mark): once Confirmed reaches it,
// the broker took the message.
func (c *Conn) Publish(topic string, payload []byte, retain bool) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if len(topic) > 65535 || 2+len(topic)+len(payload) > maxRemaining {
		return 0, errors.New("mqtt: a topic or payload beyond MQTT's bounds")
	}
	c.out = appendPublish(c.out, topic, payload, 0, retain, 0)
	if len(c.out) >= flushAt {
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
	}
	return c.marks.Load() + 1, nil
}

// flushAt is how many buffered bytes Publish writes without waiting for
// Flush: a burst of large messages (every device's DDATA of a scan class)
// goes out as it is made, so that the broker forwards the first while the
// next is encoded, rather than all at once at the end.
const flushAt = 8 << 10

// Mark appends a PINGREQ to the buffer unless the window of them is full,
// and returns the number of PINGREQs sent with it: once Confirmed reaches
// that number, the broker took every packet appended before. (A full
// window returns the number of the last one; the packets since then are
// confirmed by the next.)
func (c *Conn) Mark() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || len(c.pings) >= c.opt.Window {
		return c.marks.Load() + 1
	}
	c.out = append(c.out, tPingreq<<4, 0)
	c.pings = append(c.pings, time.Now().UnixNano())
	return c.marks.Add(1)
}

// Confirmed returns the number of PINGREQs the broker answered.
func (c *Conn) Confirmed() uint64 { return c.confirmed.Load() }

// WaitConfirmed waits until the broker answered PINGREQ number mark (see
// Mark), the connection ends or ctx does; it reports whether the broker
// answered.
func (c *Conn) WaitConfirmed(ctx context.Context, mark uint64) bool {
	for c.confirmed.Load() < mark {
		select {
		case <-c.pongs:
		case <-c.done:
			return c.confirmed.Load() >= mark
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// Flush writes what Publish and Mark appended.
func (c *Conn) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flushLocked()
}

// writeTimeout bounds a write: a broker that reads nothing for that long
// is taken for gone.
const writeTimeout = 10 * time.Second

func (c *Conn) flushLocked() error {
	if c.err != nil {
		c.out = c.out[:0]
		return c.err
	}
	if len(c.out) == 0 {
		return nil
	}
	now := time.Now()
	c.nc.SetWriteDeadline(now.Add(writeTimeout))
	_, err := c.nc.Write(c.out)
	c.out = c.out[:0]
	c.lastOut = now.UnixNano()
	if err != nil {
		c.err = fmt.Errorf("mqtt: writing: %w", err)
		go c.fail(c.err)
		return c.err
	}
	return nil
}

// Subscribe subscribes to filters at QoS qos and waits, up to ctx, for
// the broker's SUBACK; a filter the broker refused is an error.
func (c *Conn) Subscribe(ctx context.Context, qos byte, filters ...string) error {
	c.mu.Lock()
	c.nextID++
	if c.nextID == 0 {
		c.nextID = 1
	}
	id := c.nextID
	if c.err == nil {
		c.out = append(c.out, subscribePacket(id, qos, filters)...)
	}
	err := c.flushLocked()
	c.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case b := <-c.subacks:
		if len(b) != 2+len(filters) || binary.BigEndian.Uint16(b) != id {
			return fmt.Errorf("%w: a SUBACK that does not match the SUBSCRIBE", ErrProtocol)
		}
		for i, rc := range b[2:] {
			if rc == 0x80 {
				return fmt.Errorf("mqtt: the broker refused the subscription to %q", filters[i])
			}
		}
		return nil
	case <-c.done:
		return c.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close sends DISCONNECT (after what was appended, so that a last message
// goes before it) and closes the connection.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.err == nil {
		c.out = append(c.out, tDisconnect<<4, 0)
		c.flushLocked()
		if c.err == nil {
			c.err = ErrClosed
		}
	}
	c.mu.Unlock()
	c.fail(ErrClosed)
	return nil
}

// read reads the broker's packets until the connection ends.
func (c *Conn) read(r *bufio.Reader) {
	var buf []byte
	for {
		h, body, err := readPacket(r, &buf, c.opt.MaxPacket)
		if err != nil {
			c.fail(fmt.Errorf("mqtt: reading: %w", err))
			return
		}
		switch h >> 4 {
		case tPublish:
			topic, payload, qos, id, err := parsePublish(h, body)
			if err != nil {
				c.fail(err)
				return
			}
			if qos == 1 {
				c.mu.Lock()
				c.out = binary.BigEndian.AppendUint16(append(c.out, tPuback<<4, 2), id)
				c.flushLocked()
				c.mu.Unlock()
			}
			if qos == 2 {
				c.fail(fmt.Errorf("%w: a QoS 2 message on a QoS 1 subscription", ErrProtocol))
				return
			}
			if c.opt.Handler != nil {
				c.opt.Handler(topic, payload)
			}
		case tPuback:
		case tSuback:
			select {
			case c.subacks <- append([]byte(nil), body...):
			default:
			}
		case tPingresp:
			c.mu.Lock()
			if len(c.pings) == 0 {
				c.mu.Unlock()
				c.fail(fmt.Errorf("%w: a PINGRESP without a PINGREQ", ErrProtocol))
				return
			}
			c.pings = c.pings[:copy(c.pings, c.pings[1:])]
			c.mu.Unlock()
			c.confirmed.Add(1)
			select {
			case c.pongs <- struct{}{}:
			default:
			}
		default:
			c.fail(fmt.Errorf("%w: packet type %d from the broker", ErrProtocol, h>>4))
			return
		}
	}
}

// keepAlive sends a PINGREQ when nothing went out for three quarters of
// the keep-alive, and drops the connection when a PINGREQ stays
// unanswered for half of it.
func (c *Conn) keepAlive() {
	ka := c.opt.KeepAlive
	t := time.NewTicker(max(ka/8, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case now := <-t.C:
			c.mu.Lock()
			ns := now.UnixNano()
			if len(c.pings) > 0 && ns-c.pings[0] > int64(ka/2) {
				c.mu.Unlock()
				c.fail(fmt.Errorf("mqtt: no PINGRESP from the broker within %v", ka/2))
				return
			}
			if ns-c.lastOut >= int64(ka*3/4) && len(c.pings) < c.opt.Window {
				c.out = append(c.out, tPingreq<<4, 0)
				c.pings = append(c.pings, ns)
				c.marks.Add(1)
				c.flushLocked()
			}
			c.mu.Unlock()
		}
	}
}
