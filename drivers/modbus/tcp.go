package modbus

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	gb "github.com/goburrow/modbus"
)

// TCPConfig configures a Modbus TCP link.
type TCPConfig struct {
	Address string // host:port
	// Timeout bounds every transaction (its context's earlier deadline
	// ends it sooner) and a dial. Zero: 1 s.
	Timeout time.Duration
	// Reconnect back-off: the first reconnect after a failure is immediate,
	// each further consecutive failure waits twice as long, from BackoffMin
	// up to BackoffMax; a successful transaction resets it. Zero: 50 ms and
	// 5 s.
	BackoffMin, BackoffMax time.Duration
	// Dial, when set, replaces net.Dialer.DialContext (tests).
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Validate checks the fields a configuration file sets; zero durations
// are valid (they take the defaults).
func (cfg TCPConfig) Validate() error {
	if _, _, err := net.SplitHostPort(cfg.Address); err != nil {
		return fmt.Errorf("modbus: tcp address %q: %w", cfg.Address, err)
	}
	if cfg.Timeout < 0 || cfg.BackoffMin < 0 || cfg.BackoffMax < 0 {
		return fmt.Errorf("modbus: tcp %s: negative duration", cfg.Address)
	}
	return nil
}

// TCP is a Modbus TCP link: one connection to one address, shared by the
// Clients of the unit ids behind it (a gateway), transactions one at a
// time. Unlike goburrow's transporter, it closes the connection after any
// failed transaction — timeout, I/O error, short or out-of-step frame — so
// a late reply can never be read as the answer to a later request; Modbus
// exception responses are complete transactions and keep the connection.
type TCP struct {
	cfg   TCPConfig
	sem   sem        // held for a transaction and for Close
	mu    sync.Mutex // guards the Client map
	conn  net.Conn
	abort func() // cuts a blocked transaction on conn short (see send)
	buf   [tcpMaxADU]byte
	st    Stats
	fails int       // consecutive failures
	next  time.Time // no dial before this
	dials int       // successful dials
	done  bool
	ctxs  map[uint8]*Client
}

const (
	tcpHeader = 7   // MBAP header
	tcpMaxADU = 260 // 7 + 253
)

// NewTCP returns a link to cfg.Address; it connects on first use.
func NewTCP(cfg TCPConfig) *TCP {
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Second
	}
	if cfg.BackoffMin <= 0 {
		cfg.BackoffMin = 50 * time.Millisecond
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = 5 * time.Second
	}
	if cfg.BackoffMax < cfg.BackoffMin {
		cfg.BackoffMax = cfg.BackoffMin
	}
	t := &TCP{cfg: cfg, sem: newSem(), ctxs: map[uint8]*Client{}}
	t.st.setState(StateDown)
	return t
}

// Client returns the Client for unit id unit on this link (the same one for
// the same unit). Its framing is goburrow's MBAP framing, with buffers
// that it reuses (tcpFraming).
func (t *TCP) Client(unit uint8) *Client {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.ctxs[unit]; ok {
		return c
	}
	h := gb.NewTCPClientHandler(t.cfg.Address) // used only for Verify
	h.SlaveId = unit
	c := newClient(t, unit, &tcpFraming{gb: h})
	t.ctxs[unit] = c
	return c
}

// Stats returns the link's counters.
func (t *TCP) Stats() *Stats { return &t.st }

// Close closes the connection; later calls fail with ErrClosed.
func (t *TCP) Close() error {
	t.sem.acquire(context.Background())
	defer t.sem.release()
	t.done = true
	t.st.setState(StateDown)
	if t.conn != nil {
		err := t.conn.Close()
		t.conn = nil
		return err
	}
	return nil
}

func (t *TCP) acquire(ctx context.Context) error { return t.sem.acquire(ctx) }
func (t *TCP) release()                          { t.sem.release() }
func (t *TCP) stats() *Stats                     { return &t.st }

// backoff returns the wait before the next dial after n consecutive
// failures: 0 for the first, then BackoffMin doubling up to BackoffMax.
func backoff(n int, lo, hi time.Duration) time.Duration {
	if n <= 1 {
		return 0
	}
	d := lo
	for i := 2; i < n && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}

// failLocked closes the connection and schedules the next dial.
func (t *TCP) failLocked() {
	if t.conn != nil {
		t.conn.Close()
		t.conn = nil
	}
	t.fails++
	t.next = time.Now().Add(backoff(t.fails, t.cfg.BackoffMin, t.cfg.BackoffMax))
	t.st.setState(StateDown)
}

func (t *TCP) fail(err error) {
	var mb *gb.ModbusError
	if errors.As(err, &mb) {
		t.fails = 0 // the device answered in step
		return
	}
	// With no connection, the failure was the dial (already counted by
	// connectLocked) or the back-off wait.
	if t.conn != nil {
		t.failLocked()
	}
}

func (t *TCP) connectLocked(ctx context.Context) error {
	if t.done {
		return ErrClosed
	}
	if t.conn != nil {
		return nil
	}
	if now := time.Now(); now.Before(t.next) {
		return fmt.Errorf("%w (%v left)", ErrDown, t.next.Sub(now).Round(time.Millisecond))
	}
	t.st.setState(StateConnecting)
	dctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	dial := t.cfg.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	conn, err := dial(dctx, "tcp", t.cfg.Address)
	if err != nil {
		t.failLocked()
		return fmt.Errorf("%w: %w", ErrDown, err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	t.conn = conn
	t.abort = func() { conn.SetDeadline(time.Unix(1, 0)) }
	t.dials++
	if t.dials > 1 {
		t.st.Reconnects.Add(1)
	}
	t.st.setState(StateConnected)
	return nil
}

// send writes one request ADU and reads its response ADU (MBAP header
// length-checked before the body is read). Caller holds t.sem.
func (t *TCP) send(ctx context.Context, adu []byte) ([]byte, error) {
	if err := t.connectLocked(ctx); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(t.cfg.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	conn := t.conn
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	// The context's end cuts the transaction short. The scan engine's
	// context arms that without a goroutine (afterFuncer);
	// context.AfterFunc would start one per transaction for it.
	if a, ok := ctx.(afterFuncer); ok {
		defer a.AfterFunc(t.abort)()
	} else if ctx.Done() != nil {
		defer context.AfterFunc(ctx, t.abort)()
	}
	if _, err := conn.Write(adu); err != nil {
		return nil, ioErr(ctx, err)
	}
	// One read takes the whole response when it has arrived (most of
	// the time), a second only when it came in parts.
	b := t.buf[:]
	got, err := io.ReadAtLeast(conn, b, tcpHeader)
	if err != nil {
		return nil, ioErr(ctx, err)
	}
	n := int(binary.BigEndian.Uint16(b[4:]))
	// n counts unit id + PDU: at least unit id and function code, at most
	// unit id + 253 bytes of PDU.
	if n < 2 || n > tcpMaxADU-tcpHeader+1 {
		return nil, fmt.Errorf("%w: MBAP length %d", ErrFrame, n)
	}
	total := tcpHeader - 1 + n
	if got > total {
		// Only one request is ever outstanding.
		return nil, fmt.Errorf("%w: %d bytes after the response", ErrFrame, got-total)
	}
	if _, err := io.ReadFull(conn, b[got:total]); err != nil {
		return nil, ioErr(ctx, err)
	}
	if len(adu) >= 2 && (b[0] != adu[0] || b[1] != adu[1]) {
		return nil, fmt.Errorf("%w: transaction id %d, request %d", ErrFrame, binary.BigEndian.Uint16(b), binary.BigEndian.Uint16(adu))
	}
	t.fails = 0
	return b[:total], nil
}

// afterFuncer is a context that runs a function when it is done, as
// context.AfterFunc does, by a method of its own (the scan engine's
// per-call context).
type afterFuncer interface {
	AfterFunc(f func()) (stop func() bool)
}

// ioErr turns a deadline error into ErrTimeout (or the context's error when
// the context ended first).
func ioErr(ctx context.Context, err error) error {
	if ce := ctx.Err(); ce != nil {
		if errors.Is(ce, context.DeadlineExceeded) {
			return fmt.Errorf("%w: %w", ErrTimeout, ce)
		}
		return ce
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}

// Reconnect closes the connection, if any, so that the next request dials
// again at once (the back-off is reset). It waits for a transaction in
// progress, up to ctx; the link stays usable (unlike Close).
func (t *TCP) Reconnect(ctx context.Context) error {
	if err := t.sem.acquire(ctx); err != nil {
		return err
	}
	defer t.sem.release()
	if t.done {
		return ErrClosed
	}
	if t.conn != nil {
		t.conn.Close()
		t.conn = nil
	}
	t.fails, t.next = 0, time.Time{}
	t.st.setState(StateDown)
	return nil
}
