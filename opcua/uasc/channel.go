// Package uasc is the server side of OPC UA's connection and secure
// conversation layers (OPC 10000-6 §6.7 and §7.1): UA-TCP Hello,
// Acknowledge and Error; OpenSecureChannel issue and renew with token
// lifetimes; chunking, reassembly and abort chunks; sequence numbers and
// request ids; CloseSecureChannel. Security is a SecurityPolicy: the chunk
// layer calls it for headers, padding, signatures and encryption, so a new
// policy touches no framing code (see SecurityPolicy for where each step
// plugs in). SecurityPolicy None and the RSA policies of package secpol
// (NewSecurityPolicy) ship.
//
// How it works, and why, is in docs/secure-channel.md.
package uasc

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// Config sets the limits and policies of server-side channels. Zero fields
// take the defaults documented on each. Open copies the Config.
type Config struct {
	// ReceiveBufferSize and SendBufferSize are the largest chunks we accept
	// and send before negotiation with the client's Hello (default 65535,
	// minimum 8192: smaller values are raised to it). The Hello can only
	// lower them; buffers are allocated from these values, never from the
	// client's.
	ReceiveBufferSize uint32
	SendBufferSize    uint32
	// MaxMessageSize (default 16 MiB, counted over the message bodies as
	// Part 6 says) and MaxChunkCount (default 256) bound a reassembled
	// request; a request beyond them is answered with an Error
	// Bad_RequestTooLarge. The client's MaxMessageSize and MaxChunkCount
	// from its Hello (0: no limit) bound our responses.
	MaxMessageSize uint32
	MaxChunkCount  uint32
	// Budget, when set, is shared by the channels of a server and bounds
	// the bytes their reassembly buffers hold together; a request that
	// would take more is answered with Bad_RequestTooLarge (and the
	// channel closed), as one beyond MaxMessageSize is.
	Budget *Budget
	// InitialMessageLimit, when set and below MaxMessageSize, bounds a
	// request until the server raises the limit with SetMessageLimit
	// (after an ActivateSession over the channel): a client that has not
	// authenticated cannot make the server hold a large request.
	InitialMessageLimit uint32
	// HelloTimeout is how long a new connection may take to send its Hello
	// and its first OpenSecureChannel request (default 10 s).
	HelloTimeout time.Duration
	// MessageTimeout is how long a message may take to arrive once its
	// first byte has: a chunk sent in pieces, or a message whose final
	// chunk does not come (default 30 s). Then the channel is closed with
	// Bad_Timeout.
	MessageTimeout time.Duration
	// WriteTimeout bounds each write to the connection (default 10 s): a
	// client that stops reading fails the channel instead of blocking its
	// writers forever.
	WriteTimeout time.Duration
	// CloseTimeout is how long we wait, after sending an Error message,
	// for the client to close its side before we close the connection
	// (default 1 s). Closing with unread input would reset the connection
	// and could destroy the Error message before the client reads it.
	CloseTimeout time.Duration
	// MinTokenLifetime and MaxTokenLifetime bound the revised lifetime of a
	// security token (defaults 1 s and 1 h; a renewal costs the server an
	// RSA private-key operation, so 1 s bounds that cost per channel). A
	// requested lifetime of 0 gets MaxTokenLifetime. Messages under a
	// token are accepted until its lifetime plus 25 % has passed; a
	// channel whose newest token expires without renewal is closed with
	// Bad_SecureChannelTokenUnknown.
	MinTokenLifetime time.Duration
	MaxTokenLifetime time.Duration
	// Policies offered (default: PolicyNone only).
	Policies []SecurityPolicy
	// CheckEndpointURL, when set, vets the Hello's EndpointUrl; an error
	// closes the connection with Bad_TcpEndpointUrlInvalid.
	CheckEndpointURL func(url string) error
	// HeavyWork, when set, is called as a renewal's asymmetric
	// cryptography starts (milliseconds on a small core); the function it
	// returns is called as it ends. The process decides what that means
	// for the Go runtime (cmd/edged lends the work a spare P); this
	// package changes no process-wide state.
	HeavyWork func() (done func())
	// Limits of the decoder that reads OpenSecureChannel requests.
	Limits ua.Limits
	// NextChannelID returns a fresh, unique secure channel id (the server
	// owns the id space). Default: a process-wide counter.
	NextChannelID func() uint32
	// ReadSpin, when positive, makes ReadRequest poll the connection with
	// non-blocking reads for up to this long before it blocks waiting for
	// the next request (default 0: it blocks at once). It trades CPU for
	// latency: a client that sends its next request within ReadSpin is
	// served without a wake-up, while the reading goroutine burns its
	// core meanwhile (yielding to other goroutines between polls). See
	// spinFill in recv.go and the Performance section of the README.
	ReadSpin time.Duration
}

// Defaults of Config.
const (
	DefaultBufferSize       = 65535
	DefaultMaxMessageSize   = 16 << 20
	DefaultMaxChunkCount    = 256
	DefaultHelloTimeout     = 10 * time.Second
	DefaultMessageTimeout   = 30 * time.Second
	DefaultWriteTimeout     = 10 * time.Second
	DefaultCloseTimeout     = 1 * time.Second
	DefaultMinTokenLifetime = time.Second
	DefaultMaxTokenLifetime = time.Hour
)

var channelIDs atomic.Uint32

func defaultNextChannelID() uint32 {
	for {
		if id := channelIDs.Add(1); id != 0 {
			return id
		}
	}
}

// withDefaults returns a copy of cfg with its zero fields set.
func (cfg *Config) withDefaults() Config {
	c := Config{}
	if cfg != nil {
		c = *cfg
	}
	setU32 := func(v *uint32, def uint32) {
		if *v == 0 {
			*v = def
		}
	}
	setU32(&c.ReceiveBufferSize, DefaultBufferSize)
	setU32(&c.SendBufferSize, DefaultBufferSize)
	c.ReceiveBufferSize = max(c.ReceiveBufferSize, MinBufferSize)
	c.SendBufferSize = max(c.SendBufferSize, MinBufferSize)
	setU32(&c.MaxMessageSize, DefaultMaxMessageSize)
	setU32(&c.MaxChunkCount, DefaultMaxChunkCount)
	setDur := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	setDur(&c.HelloTimeout, DefaultHelloTimeout)
	setDur(&c.MessageTimeout, DefaultMessageTimeout)
	setDur(&c.WriteTimeout, DefaultWriteTimeout)
	setDur(&c.CloseTimeout, DefaultCloseTimeout)
	setDur(&c.MinTokenLifetime, DefaultMinTokenLifetime)
	setDur(&c.MaxTokenLifetime, DefaultMaxTokenLifetime)
	if c.MaxTokenLifetime < c.MinTokenLifetime {
		c.MaxTokenLifetime = c.MinTokenLifetime
	}
	if len(c.Policies) == 0 {
		c.Policies = []SecurityPolicy{PolicyNone}
	}
	if c.NextChannelID == nil {
		c.NextChannelID = defaultNextChannelID
	}
	return c
}

// Request is a service request received on a channel.
type Request struct {
	// RequestID is the secure conversation request id, to be echoed by
	// WriteResponse.
	RequestID uint32
	// Message is the service message: the NodeId of the type's
	// DefaultBinary encoding followed by the body. It points into the
	// channel's receive buffer and is valid until the next ReadRequest.
	Message []byte
	// Received is when the channel read the request's last chunk from
	// the connection: the clock is read once per read, so the requests a
	// client pipelined share the time of the read that brought them. A
	// server can stamp the request with it rather than read the clock
	// again.
	Received time.Time
}

// ErrClosed is returned by ReadRequest after the client closed the channel
// with CloseSecureChannel or the connection ended, and by every call after
// Close.
var ErrClosed = errors.New("uasc: secure channel closed")

// Error is a protocol violation of the client, or a failure of ours, that
// closed the channel after an Error message with Code was sent.
type Error struct {
	Code   ua.StatusCode
	Reason string
}

func (e *Error) Error() string { return "uasc: " + e.Reason + ": " + e.Code.Error() }

// Unwrap returns e.Code.
func (e *Error) Unwrap() error { return e.Code }

// PeerError is the UA-TCP Error message a client sent instead of its
// Hello on a connection the server opened (reverse connect): the client
// refused it.
type PeerError struct {
	Code   ua.StatusCode
	Reason string
}

func (e *PeerError) Error() string {
	return "uasc: the client refused: " + e.Reason + ": " + e.Code.Error()
}

// Unwrap returns e.Code.
func (e *PeerError) Unwrap() error { return e.Code }

// fault returns an *Error.
func fault(code ua.StatusCode, reason string) error { return &Error{Code: code, Reason: reason} }

// token is one security token of the channel.
type token struct {
	id        uint32
	createdAt time.Time
	lifetime  time.Duration
	// expires is createdAt + 125 % of the lifetime: until then messages
	// under the token are accepted.
	expires time.Time
	crypto  ChunkCrypto
	maxBody int // body bytes per MSG chunk we send under this token
}

// Channel is one client's secure channel over one connection. ReadRequest
// is called by one goroutine; WriteResponse, QueueResponse, PostResponse,
// Flush and Close may be called from several.
type Channel struct {
	nc  net.Conn
	cfg Config

	// Fixed when Open returns.
	id            uint32
	policy        SecurityPolicy
	mode          ua.MessageSecurityMode
	peerCert      []byte // the client's certificate (DER); nil under None
	ikm           []byte // the enhanced ECC policies' IKM of the last token
	thumbprint    []byte // the enhanced ECC policies' ChannelThumbprint
	recvBufSize   int
	sendBufSize   int
	sendMaxMsg    uint32 // the client's MaxMessageSize; 0: no limit
	sendMaxChunks uint32 // the client's MaxChunkCount; 0: no limit
	maxQueued     int    // QueueResponse writes once this many bytes are queued

	// Reader state, owned by the goroutine in Open and ReadRequest.
	rbuf     []byte // receive buffer: unread bytes are rbuf[r:w]
	r, w     int
	msg      []byte // reassembly of a multi-chunk request
	msgLimit uint32 // the largest request accepted now (see SetMessageLimit)
	inMsg    bool   // msg holds the first chunks of request msgReq
	msgReq   uint32
	msgCount uint32    // chunks in msg
	msgStart time.Time // when the bytes of the current message began; zero: idle
	readAt   time.Time // when the last read from the connection returned bytes
	drained  bool      // the last ReadAvailable read all the socket held (Drained)
	roomAt   int       // the free send room the socket last reported (WriteRoom: the poller's)
	sentAt   uint64    // s.sent then
	deadline time.Time // the read deadline set on nc
	hsEnd    time.Time // end of the handshake (HelloTimeout)
	lastSeq  uint32    // sequence number of the last chunk received
	cur      *token    // newest token
	// old are the older tokens still accepted: the one the client used
	// last (which we send with) and those issued after it that it has not
	// used yet, oldest first, at most maxOldTokens; empty once the client
	// uses cur.
	old     []*token
	nextTok uint32
	dec     ua.Decoder
	osc     ua.OpenSecureChannelRequest
	// A multi-chunk OpenSecureChannel request being gathered: its body so
	// far, its chunks (0: none), its security header, policy, checks and
	// request id.
	opn       []byte
	opnChunks int
	opnHdr    []byte
	opnPolicy SecurityPolicy
	opnAsym   AsymmetricResult
	opnReq    uint32
	rerr      error    // sticky read error
	spin      *spinner // Config.ReadSpin's poller, made at its first use
	raw       *rawIO   // nc's socket read and written raw; nil: nc's own methods
	noWait    bool     // TryReadRequest: fill returns errWouldBlock
	reverse   bool     // the server opened the connection: an Error may answer its ReverseHello

	s sender

	closed    atomic.Bool
	closeOnce sync.Once
	held      atomic.Int64 // bytes of cfg.Budget that msg holds
}

// Open runs the handshake on a new server-side connection: Hello →
// Acknowledge → OpenSecureChannel (Issue). Protocol violations are
// answered with an Error message carrying their status code before the
// connection is closed; the returned error is (or wraps) that
// ua.StatusCode. HelloTimeout bounds the handshake; cancelling ctx aborts
// it. On failure nc is closed.
func Open(ctx context.Context, nc net.Conn, cfg *Config) (*Channel, error) {
	return open(ctx, nc, cfg, nil)
}

// OpenReverse runs the handshake on a connection the server opened to a
// client (reverse connect, OPC 10000-6 §7.1.3): it sends a ReverseHello
// with serverURI and endpointURL, then goes on as Open. A client that
// answers with an Error message instead of its Hello ends it with a
// *PeerError (nothing is sent back).
func OpenReverse(ctx context.Context, nc net.Conn, cfg *Config, serverURI, endpointURL string) (*Channel, error) {
	if len(serverURI) > maxURLLength || len(endpointURL) > maxURLLength {
		nc.Close()
		return nil, errors.New("uasc: a ReverseHello's ServerUri and EndpointUrl are at most 4096 bytes each")
	}
	return open(ctx, nc, cfg, AppendReverseHello(nil, serverURI, endpointURL))
}

func open(ctx context.Context, nc net.Conn, cfg *Config, rhe []byte) (*Channel, error) {
	c := &Channel{nc: nc, cfg: cfg.withDefaults(), raw: newRawIO(nc), reverse: rhe != nil}
	c.msgLimit = c.cfg.MaxMessageSize
	if l := c.cfg.InitialMessageLimit; l > 0 && l < c.msgLimit {
		c.msgLimit = l
	}
	c.s.cond.L = &c.s.mu
	c.dec.Limits = c.cfg.Limits
	c.hsEnd = time.Now().Add(c.cfg.HelloTimeout)
	c.deadline = c.hsEnd
	if err := nc.SetReadDeadline(c.hsEnd); err != nil {
		nc.Close()
		return nil, err
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		nc.SetDeadline(time.Unix(1, 0))
		close(fired)
	})
	var err error
	if rhe != nil {
		c.s.mu.Lock()
		c.s.buf = append(c.s.buf[:0], rhe...)
		err = c.flushLocked()
	}
	if err == nil {
		err = c.handshake()
	}
	if !stop() {
		<-fired
		if err == nil {
			// ctx ended after the handshake was through: the client has
			// its channel. Undo our deadline and hand the channel over,
			// so the caller closes it in words (a server shutting down
			// sends Bad_Shutdown) rather than by a reset.
			if err = nc.SetDeadline(time.Time{}); err == nil {
				c.deadline = time.Time{}
			}
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			// Our deadline cut the handshake short; no Error message.
			err = ctx.Err()
		}
		return nil, c.fail(err)
	}
	return c, nil
}

// handshake is the server's side of the connection's start, as named
// steps.
func (c *Channel) handshake() error {
	h, err := c.readHello()
	if err != nil {
		return err
	}
	if err := c.checkEndpointURL(h); err != nil {
		return err
	}
	if err := c.acknowledge(h); err != nil {
		return err
	}
	return c.openSecureChannel()
}

// readHello reads the client's Hello.
func (c *Channel) readHello() (*hello, error) {
	c.rbuf = make([]byte, min(initialRecvBuf, int(c.cfg.ReceiveBufferSize)))
	c.recvBufSize = maxHelloLen
	b, err := c.readChunk(phaseHello)
	if err != nil {
		return nil, err
	}
	if msgType(b) == kindERR {
		e, err := decodeError(b[hdrLen:])
		if err != nil {
			return nil, fault(status.BadTcpMessageTypeInvalid, "malformed Error")
		}
		return nil, e
	}
	h := new(hello)
	if err := h.decode(b[hdrLen:]); err != nil {
		return nil, fault(err.(ua.StatusCode), "malformed Hello")
	}
	return h, nil
}

// checkEndpointURL runs Config.CheckEndpointURL on the Hello's URL.
func (c *Channel) checkEndpointURL(h *hello) error {
	if c.cfg.CheckEndpointURL == nil {
		return nil
	}
	if err := c.cfg.CheckEndpointURL(h.EndpointURL); err != nil {
		return fault(status.BadTcpEndpointURLInvalid, "endpoint URL rejected: "+err.Error())
	}
	return nil
}

// acknowledge negotiates the buffer sizes and sends the Acknowledge.
func (c *Channel) acknowledge(h *hello) error {
	ack, err := negotiate(h, &c.cfg)
	if err != nil {
		return fault(err.(ua.StatusCode), "Hello buffer sizes below 8192 bytes")
	}
	c.recvBufSize = int(ack.ReceiveBufferSize)
	c.sendBufSize = int(ack.SendBufferSize)
	c.sendMaxMsg = h.MaxMessageSize
	c.sendMaxChunks = h.MaxChunkCount
	c.maxQueued = queuedBuffers * c.sendBufSize
	c.s.mu.Lock()
	c.s.buf = appendAcknowledge(c.s.buf[:0], &ack)
	return c.flushLocked()
}

// openSecureChannel reads the first OpenSecureChannel request (Issue),
// issues the first token and sends the response.
func (c *Channel) openSecureChannel() error {
	for {
		b, err := c.readChunk(phaseOpen)
		if err != nil {
			return err
		}
		if done, err := c.handleOPN(b, true); done || err != nil {
			return err
		}
	}
}

// ID returns the secure channel id.
func (c *Channel) ID() uint32 { return c.id }

// SecurityPolicyURI returns the URI of the channel's security policy.
func (c *Channel) SecurityPolicyURI() string { return c.policy.URI() }

// SecurityMode returns the channel's message security mode.
func (c *Channel) SecurityMode() ua.MessageSecurityMode { return c.mode }

// PeerCertificate returns the client's application instance certificate
// (DER) the channel was opened with; nil under SecurityPolicy None.
func (c *Channel) PeerCertificate() []byte { return c.peerCert }

// ChannelThumbprint is the channel's ChannelThumbprint under an enhanced
// ECC policy (the signature of the first OpenSecureChannel response; OPC
// 10000-6 v1.05.07 §6.7.5), to which session signatures are bound; nil
// under the other policies.
func (c *Channel) ChannelThumbprint() []byte { return c.thumbprint }

// Closed reports whether the channel is closed or dead (Close, a failed
// read, a failed write): nothing written to it reaches the client any
// more. Safe from any goroutine.
func (c *Channel) Closed() bool {
	if c.closed.Load() {
		return true
	}
	c.s.mu.Lock()
	dead := c.s.err != nil
	c.s.mu.Unlock()
	return dead
}

// Close writes the responses QueueResponse left, sends an Error message
// with status and reason (unless status is Good) and closes the
// connection. A ReadRequest blocked in another goroutine returns
// ErrClosed; later calls of every method return ErrClosed. Close may be
// called more than once and from any goroutine. Writes end within
// CloseTimeout from the call, the one in progress too: a client that stopped
// reading holds Close (and a server's Shutdown) that long, not for
// WriteTimeout.
func (c *Channel) Close(status ua.StatusCode, reason string) error {
	var err error
	c.giveBack() // the reader drops the buffer when its read fails
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.nc.SetWriteDeadline(time.Now().Add(c.cfg.CloseTimeout))
		c.s.mu.Lock()
		switch {
		case c.s.err != nil:
			c.s.mu.Unlock()
		case status.IsBad():
			// After the responses QueueResponse left, if any.
			c.s.buf = AppendError(c.s.buf, status, reason)
			err = c.flushLocked()
		case len(c.s.buf) > 0:
			// The responses QueueResponse left go out first.
			err = c.flushLocked()
		default:
			c.s.mu.Unlock()
		}
		c.s.mu.Lock()
		if c.s.err == nil {
			c.s.err = ErrClosed
		}
		c.s.mu.Unlock()
		if cw, ok := c.nc.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		if cerr := c.nc.Close(); err == nil {
			err = cerr
		}
	})
	return err
}

// SetMessageLimit sets the largest request the channel accepts from now
// on, at most Config.MaxMessageSize (see Config.InitialMessageLimit). Only
// the reading goroutine may call it.
func (c *Channel) SetMessageLimit(n uint32) { c.msgLimit = min(n, c.cfg.MaxMessageSize) }

// giveBack returns to the budget what the reassembly buffer took.
func (c *Channel) giveBack() { c.cfg.Budget.give(c.held.Swap(0)) }

// fail ends the channel after err, on the reading goroutine: a protocol
// violation (a ua.StatusCode) is answered with an Error message, our side
// is shut down, the client's remaining bytes are drained for up to
// CloseTimeout, and the connection is closed. It returns the sticky error.
func (c *Channel) fail(err error) error {
	if c.closed.Load() {
		// Close was called: whatever the read saw, the channel is closed.
		err = ErrClosed
	}
	var code ua.StatusCode
	send := false
	c.s.mu.Lock()
	if c.s.err != nil {
		// A write failed first, or Close ran: that is the channel's error.
		err = c.s.err
	} else {
		var pe *PeerError
		send = !errors.Is(err, ErrClosed) && !errors.As(err, &pe) && errors.As(err, &code) && code.IsBad()
		if send {
			reason := err.Error()
			var e *Error
			if errors.As(err, &e) {
				reason = e.Reason
			}
			c.s.buf = AppendError(c.s.buf, code, reason)
			c.flushLocked() // unlocks
			c.s.mu.Lock()
		} else if len(c.s.buf) > 0 {
			// Responses QueueResponse left (the client pipelined
			// requests and then CloseSecureChannel, or the read
			// failed): they go out before the channel ends, as they
			// would have without queueing; a failure of this write
			// does not replace err.
			c.flushLocked() // unlocks
			c.s.mu.Lock()
			c.s.err = err
		}
		if c.s.err == nil {
			c.s.err = err
		}
	}
	c.s.mu.Unlock()
	c.msg = nil
	c.giveBack()
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		if cw, ok := c.nc.(interface{ CloseWrite() error }); ok && send {
			cw.CloseWrite()
			c.drain()
		}
		c.nc.Close()
	})
	c.rerr = err
	return err
}

// drainLimit bounds what drain reads: a client that goes on sending after
// our Error is not waited for (its connection is reset), so that one that
// streams data at the closing channel costs little.
const drainLimit = 64 << 10

// drain reads and discards what the client still sends, until it closes
// its side, CloseTimeout passes or drainLimit bytes came, so that closing
// does not reset the connection before the client has read our Error
// message.
func (c *Channel) drain() {
	c.nc.SetReadDeadline(time.Now().Add(c.cfg.CloseTimeout))
	var buf [4096]byte
	for n := 0; n < drainLimit; {
		k, err := c.nc.Read(buf[:])
		if err != nil {
			return
		}
		n += k
	}
}

// maxOldTokens bounds the older tokens a channel accepts besides its
// newest (see Channel.old).
const maxOldTokens = 4

// isStatus reports whether err is or wraps a ua.StatusCode.
func isStatus(err error) bool {
	var code ua.StatusCode
	return errors.As(err, &code)
}

// readError translates an error of nc.Read into the channel's error.
func (c *Channel) readError(err error, partial bool) error {
	if c.closed.Load() {
		return ErrClosed
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		now := time.Now()
		switch {
		case c.cur == nil:
			return fault(status.BadTimeout, "handshake not completed within HelloTimeout")
		case partial && !c.msgStart.IsZero() && !now.Before(c.msgStart.Add(c.cfg.MessageTimeout)):
			return fault(status.BadTimeout, "message not completed within MessageTimeout")
		case !now.Before(c.cur.expires):
			return fault(status.BadSecureChannelTokenUnknown, "security token expired without renewal")
		}
		return fault(status.BadTimeout, "read timeout")
	case errors.Is(err, io.EOF):
		if partial {
			return io.ErrUnexpectedEOF
		}
		return ErrClosed
	}
	return err
}

// lifetime revises a requested token lifetime (ms) within the Config's
// bounds.
func (c *Channel) lifetime(requestedMS uint32) time.Duration {
	d := time.Duration(requestedMS) * time.Millisecond
	if requestedMS == 0 {
		d = c.cfg.MaxTokenLifetime
	}
	d = min(max(d, c.cfg.MinTokenLifetime), c.cfg.MaxTokenLifetime)
	if d > math.MaxUint32*time.Millisecond {
		d = math.MaxUint32 * time.Millisecond
	}
	return d.Truncate(time.Millisecond)
}
