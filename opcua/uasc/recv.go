package uasc

import (
	"encoding/binary"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// phase is what the reader expects next: a Hello, the first
// OpenSecureChannel, or secure channel messages.
type phase int

const (
	phaseHello phase = iota
	phaseOpen
	phaseMessages
)

// yieldBytes is how much ReadRequest reads without yielding: a short
// stretch of copying at memory speed.
const yieldBytes = 256 << 10

// ReadRequest returns the next service request. OpenSecureChannel renewals,
// CloseSecureChannel and abort chunks are handled inside. After
// CloseSecureChannel, or when the client ends the connection between
// messages, it returns ErrClosed; after a protocol violation, the
// ua.StatusCode sent to the client in an Error message (wrapped in an
// *Error). Errors are sticky.
//
// Request.Message points into the channel's buffers and is valid until the
// next ReadRequest. ReadRequest must not be called concurrently with
// itself.
func (c *Channel) ReadRequest() (Request, error) {
	if c.rerr != nil {
		return Request{}, c.rerr
	}
	read := 0
	for {
		chunk, err := c.readChunk(phaseMessages)
		if err == errWouldBlock {
			return Request{}, err // TryReadRequest: not an error of the channel
		}
		if err != nil {
			return Request{}, c.fail(err)
		}
		if c.inMsg {
			// A chunk of a multi-chunk request: a client streaming a
			// large message keeps the socket readable, so this loop would
			// not block for the whole message. Let the scheduler run
			// its timers and the scan, and keep to the Budget's pace.
			if d := c.cfg.Budget.pace(len(chunk)); d > 0 {
				time.Sleep(d)
			} else if read += len(chunk); read >= yieldBytes {
				read = 0
				runtime.Gosched()
			}
		}
		var req Request
		var ok bool
		switch msgType(chunk) {
		case kindMSG:
			if c.opnChunks > 0 {
				return Request{}, c.fail(fault(status.BadTcpMessageTypeInvalid, "request chunk inside a multi-chunk OpenSecureChannel"))
			}
			req, ok, err = c.handleMSG(chunk)
		case kindOPN:
			_, err = c.handleOPN(chunk, false)
			if !c.inMsg && c.opnChunks == 0 {
				c.msgStart = time.Time{}
			}
		case kindCLO:
			err = c.handleCLO(chunk)
		}
		if err != nil {
			return Request{}, c.fail(err)
		}
		if ok {
			return req, nil
		}
	}
}

// Buffered reports whether the receive buffer already holds the whole of
// the next request, so that the next ReadRequest returns it without
// waiting for the connection: the client pipelines. Its chunks may follow
// intermediate and abort chunks and OpenSecureChannel renewals; a
// CloseSecureChannel, or a chunk the next ReadRequest rejects, also counts
// (that ReadRequest does not wait either). It reads no bytes and does not
// allocate; like ReadRequest, only the reading goroutine may call it.
//
// A server answers a request with QueueResponse while Buffered reports
// true and with WriteResponse when it does not, so that a batch of
// pipelined requests costs one write and a lone request is written at
// once.
func (c *Channel) Buffered() bool {
	if c.rerr != nil || c.cur == nil {
		return false
	}
	b := c.rbuf[c.r:c.w]
	for range maxScanChunks {
		if len(b) < hdrLen {
			return false
		}
		size := binary.LittleEndian.Uint32(b[4:8])
		if size < hdrLen || size > uint32(c.recvBufSize) {
			return true // rejected without reading further
		}
		if uint64(size) > uint64(len(b)) {
			return false
		}
		switch typ, ct := msgType(b), b[3]; {
		case typ == kindMSG && (ct == 'C' || ct == 'A'), typ == kindOPN:
			// Handled inside ReadRequest, which then reads on.
			b = b[size:]
		default:
			return true // the final chunk of a request, CLO, or garbage
		}
	}
	return false // many small chunks: do not look further
}

// maxScanChunks bounds the chunks Buffered looks at.
const maxScanChunks = 64

// queuedBuffers is how many negotiated send buffers of responses
// QueueResponse lets queue up before it writes them: it bounds the
// memory of a pipelining channel (two send buffers of about this size
// plus one response each), while a write of 64 KiB costs little more
// than the system call of a smaller one.
const queuedBuffers = 1

// readChunk returns the next whole chunk from the receive buffer, reading
// from the connection as needed. The header is checked before the body is
// read: the type against what the phase allows, the size against the
// negotiated receive buffer. The chunk aliases rbuf and is valid until the
// next readChunk.
func (c *Channel) readChunk(ph phase) ([]byte, error) {
	for c.w-c.r < hdrLen {
		if err := c.fill(hdrLen); err != nil {
			return nil, err
		}
	}
	h := c.rbuf[c.r:c.w]
	size := binary.LittleEndian.Uint32(h[4:8])
	if err := c.checkHeader(ph, h, size); err != nil {
		return nil, err
	}
	n := int(size) // ≤ recvBufSize, so it fits an int (fill grows rbuf to it)
	for c.w-c.r < n {
		if err := c.fill(n); err != nil {
			return nil, err
		}
	}
	chunk := c.rbuf[c.r : c.r+n : c.r+n]
	c.r += n
	return chunk, nil
}

// checkHeader checks a message header before its body is read.
func (c *Channel) checkHeader(ph phase, h []byte, size uint32) error {
	typ, ct := msgType(h), h[3]
	minSize := uint32(0)
	switch ph {
	case phaseHello:
		if c.reverse && typ == kindERR && ct == 'F' {
			minSize = hdrLen + 8
			break
		}
		if typ != kindHEL || ct != 'F' {
			return fault(status.BadTcpMessageTypeInvalid, "expected a Hello, got "+strconv.Quote(string(h[:4])))
		}
		minSize = hdrLen + helloFixedLen + 4
	case phaseOpen:
		if typ != kindOPN || (ct != 'F' && ct != 'C' && ct != 'A') {
			return fault(status.BadTcpMessageTypeInvalid, "expected OpenSecureChannel, got "+strconv.Quote(string(h[:4])))
		}
		minSize = chanHdrLen + 12 + seqHdrLen
	default:
		switch {
		case typ == kindMSG && (ct == 'F' || ct == 'C' || ct == 'A'):
			minSize = symHdrLen + seqHdrLen
		case typ == kindCLO && ct == 'F':
			minSize = symHdrLen + seqHdrLen
		case typ == kindOPN && (ct == 'F' || ct == 'C' || ct == 'A'):
			minSize = chanHdrLen + 12 + seqHdrLen
		default:
			return fault(status.BadTcpMessageTypeInvalid, "unexpected message type "+strconv.Quote(string(h[:4])))
		}
	}
	if size > uint32(c.recvBufSize) {
		return fault(status.BadTcpMessageTooLarge, "chunk of "+strconv.FormatUint(uint64(size), 10)+
			" bytes exceeds the receive buffer of "+strconv.Itoa(c.recvBufSize))
	}
	if size < minSize {
		return fault(status.BadDecodingError, "chunk too short for its headers")
	}
	return nil
}

// initialRecvBuf is the receive buffer a channel starts with: enough for
// the Hello and for the requests of a client that polls. It grows to the
// negotiated size (growRecv) for a chunk that does not fit, or once a
// read filled it (a client that pipelines), so that a connection of
// small requests does not hold a buffer of 64 KiB.
const initialRecvBuf = 8192

// growRecv makes rbuf the negotiated receive buffer size, keeping its
// unread bytes. The old buffer is not written again, so what aliases it
// stays as it was.
func (c *Channel) growRecv() {
	if c.recvBufSize <= len(c.rbuf) {
		return
	}
	b := make([]byte, c.recvBufSize)
	c.w = copy(b, c.rbuf[c.r:c.w])
	c.r = 0
	c.rbuf = b
}

// fill reads more bytes into rbuf; need is how many bytes from c.r the
// caller wants contiguous (at most the negotiated receive buffer size,
// to which rbuf grows). It sets the read deadline:
// between messages the expiry of the newest token (or the end of the
// handshake); when it has to wait for the rest of a message, also
// MessageTimeout from the first such wait (msgStart). A message that
// arrives whole costs no clock reading and no deadline change.
func (c *Channel) fill(need int) error {
	if c.noWait {
		return errWouldBlock
	}
	if c.r == c.w {
		c.r, c.w = 0, 0
	} else if len(c.rbuf)-c.r < need {
		c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		c.r = 0
	}
	if need > len(c.rbuf) {
		c.growRecv() // need ≤ recvBufSize (checkHeader)
	}
	partial := c.w > c.r || c.inMsg || c.opnChunks > 0
	if partial && c.msgStart.IsZero() {
		c.msgStart = time.Now()
	}
	dl := c.hsEnd
	if c.cur != nil {
		dl = c.cur.expires
	}
	if partial {
		if end := c.msgStart.Add(c.cfg.MessageTimeout); end.Before(dl) {
			dl = end
		}
	}
	if c.cur != nil {
		// About to wait for the client: what QueueResponse left goes
		// out first (the client may be waiting for it).
		if err := c.flushQueued(); err != nil {
			return err
		}
	}
	if c.cfg.ReadSpin > 0 && !partial && c.cur != nil {
		if n := c.spinFill(); n > 0 {
			c.w += n
			c.readAt = time.Now()
			return nil
		}
	}
	if !dl.Equal(c.deadline) {
		if err := c.nc.SetReadDeadline(dl); err != nil {
			return c.readError(err, partial)
		}
		c.deadline = dl
	}
	var n int
	var err error
	if c.raw != nil {
		n, err = c.raw.read(c.rbuf[c.w:])
	} else {
		n, err = c.nc.Read(c.rbuf[c.w:])
	}
	c.w += n
	if n > 0 {
		c.readAt = time.Now()
	}
	if err != nil && n == 0 {
		return c.readError(err, partial)
	}
	if c.w == len(c.rbuf) {
		c.growRecv() // a read filled it: the client sends more at a time
	}
	return nil
}

// spinner polls a connection with non-blocking reads (Config.ReadSpin).
// Its read function is made once, so polling does not allocate.
type spinner struct {
	rc   syscall.RawConn
	buf  []byte
	n    int
	err  error
	read func(fd uintptr) bool
}

// spinFill polls the connection for up to Config.ReadSpin, between
// messages, before fill blocks in a read: a client that answers quickly
// then costs no wake-up of this goroutine's thread, which on a host with
// idle cores (and on a VM above all, where an idle vCPU halts) takes far
// longer than the request itself. It yields to other goroutines between
// polls. It returns how many bytes it read into rbuf, 0 when nothing came
// in time or on any condition (end of stream, error, a deadline that has
// passed) that it leaves to the blocking read to report. Connections that
// are not a syscall.Conn are not polled.
func (c *Channel) spinFill() int {
	sp := c.spin
	if sp == nil {
		sc, ok := c.nc.(syscall.Conn)
		if !ok {
			return 0
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return 0
		}
		sp = &spinner{rc: rc}
		sp.read = func(fd uintptr) bool {
			sp.n, sp.err = syscall.Read(int(fd), sp.buf)
			return true // never park: we poll
		}
		c.spin = sp
	}
	sp.buf = c.rbuf[c.w:]
	defer func() { sp.buf = nil }()
	start := time.Now()
	for {
		if err := sp.rc.Read(sp.read); err != nil {
			return 0
		}
		switch {
		case sp.err == nil && sp.n > 0:
			return sp.n
		case sp.err != syscall.EAGAIN && sp.err != syscall.EINTR:
			return 0 // end of stream or an error: the blocking read reports it
		}
		if time.Since(start) >= c.cfg.ReadSpin {
			return 0
		}
		runtime.Gosched()
	}
}

// checkSeq checks the sequence number of a received chunk: one more than
// the last, or, once the last passed 4294966271, a wrap to below 1024
// (OPC 10000-6 §6.7.2.4).
func (c *Channel) checkSeq(seq uint32) error {
	if seq == c.lastSeq+1 || (c.lastSeq > lastSeqBeforeWrap && seq < 1024) {
		c.lastSeq = seq
		return nil
	}
	return fault(status.BadSequenceNumberInvalid, "sequence number "+strconv.FormatUint(uint64(seq), 10)+
		" after "+strconv.FormatUint(uint64(c.lastSeq), 10))
}

// tokenFor returns the token a MSG or CLO chunk names. The older tokens
// (Channel.old) are accepted until the client uses a newer one, which we
// then also use to send; any token is accepted only until its lifetime
// plus 25 % has passed (OPC 10000-4 §5.5.2).
func (c *Channel) tokenFor(chunk []byte, now time.Time) (*token, error) {
	if id := binary.LittleEndian.Uint32(chunk[8:]); id != c.id {
		return nil, fault(status.BadSecureChannelIDInvalid, "chunk for secure channel "+strconv.FormatUint(uint64(id), 10))
	}
	id := binary.LittleEndian.Uint32(chunk[12:])
	t, at := c.cur, len(c.old) // at: its index in old, len(old) for cur
	if id != c.cur.id {
		t = nil
		for i, o := range c.old {
			if o.id == id {
				t, at = o, i
			}
		}
		if t == nil {
			return nil, fault(status.BadSecureChannelTokenUnknown, "unknown token "+strconv.FormatUint(uint64(id), 10))
		}
	}
	if now.After(t.expires) {
		return nil, fault(status.BadSecureChannelTokenUnknown, "token "+strconv.FormatUint(uint64(id), 10)+" expired")
	}
	if at > 0 {
		// The client uses a newer token than the one it used last: the
		// older ones are done with, and our responses switch to it.
		if at == len(c.old) {
			c.old = c.old[:0]
		} else {
			c.old = append(c.old[:0], c.old[at:]...)
		}
		c.s.mu.Lock()
		c.s.tok = t
		c.s.mu.Unlock()
	}
	return t, nil
}

// handleMSG processes a MSG chunk. ok reports a complete request.
func (c *Channel) handleMSG(chunk []byte) (req Request, ok bool, err error) {
	now := c.readAt // the chunk came with that read
	t, err := c.tokenFor(chunk, now)
	if err != nil {
		return req, false, err
	}
	plain, err := openChunk(chunk, symHdrLen, t.crypto, c.lastSeq)
	if err != nil {
		return req, false, fault(err.(ua.StatusCode), "MSG chunk failed the security checks")
	}
	if err := c.checkSeq(binary.LittleEndian.Uint32(plain)); err != nil {
		return req, false, err
	}
	reqID := binary.LittleEndian.Uint32(plain[4:])
	body := plain[seqHdrLen:]
	if c.inMsg && reqID != c.msgReq {
		return req, false, fault(status.BadTcpMessageTypeInvalid, "chunk of request "+strconv.FormatUint(uint64(reqID), 10)+
			" inside request "+strconv.FormatUint(uint64(c.msgReq), 10))
	}
	switch chunk[3] {
	case 'A':
		// Abort (§6.7.3): drop the partial request; no response and the
		// channel stays open. The body (Error, Reason) is not needed.
		c.endMsg()
		return req, false, nil
	case 'C':
		if !c.inMsg {
			c.startMsg(reqID)
		}
		return req, false, c.appendBody(body)
	}
	// 'F'
	if !c.inMsg {
		if uint64(len(body)) > uint64(c.msgLimit) {
			return req, false, c.tooLarge()
		}
		c.msgStart = time.Time{}
		return Request{RequestID: reqID, Message: body, Received: now}, true, nil
	}
	if err := c.appendBody(body); err != nil {
		return req, false, err
	}
	c.endMsg()
	return Request{RequestID: reqID, Message: c.msg, Received: now}, true, nil
}

// startMsg starts the reassembly of request reqID. The buffer of the
// previous request, handed out by the last ReadRequest and so no longer
// in use, is kept when it is small and released when it is large.
func (c *Channel) startMsg(reqID uint32) {
	if cap(c.msg) > keepMsgCap {
		c.msg = nil
		c.giveBack()
	}
	c.inMsg, c.msgReq, c.msgCount, c.msg = true, reqID, 0, c.msg[:0]
}

// endMsg ends the reassembly of a request (complete or aborted).
func (c *Channel) endMsg() {
	c.inMsg, c.msgCount = false, 0
	c.msgStart = time.Time{}
}

// appendBody adds one chunk's body to the request being reassembled,
// within MaxChunkCount, the message limit (MaxMessageSize, or less, see
// SetMessageLimit) and the shared Budget. The reassembly buffer grows to
// at most the message limit; it is kept for the next request up to
// keepMsgCap (see startMsg).
func (c *Channel) appendBody(body []byte) error {
	c.msgCount++
	if c.msgCount > c.cfg.MaxChunkCount {
		return c.tooLarge()
	}
	need := int64(len(c.msg)) + int64(len(body))
	if need > int64(c.msgLimit) {
		return c.tooLarge()
	}
	if need > int64(cap(c.msg)) {
		n := min(max(2*int64(cap(c.msg)), need, 4096), int64(c.msgLimit))
		if !c.cfg.Budget.take(n - int64(cap(c.msg))) {
			// Doubling overshoots what is left: take just what is needed.
			if n = need; !c.cfg.Budget.take(n - int64(cap(c.msg))) {
				return fault(status.BadRequestTooLarge, "the server's memory for requests is taken by others: try again later")
			}
		}
		c.held.Add(n - int64(cap(c.msg)))
		m := make([]byte, len(c.msg), int(n))
		copyYielding(m, c.msg)
		c.msg = m
	}
	c.msg = append(c.msg, body...)
	return nil
}

// copyYielding copies src to dst (as copy does) in pieces of yieldBytes,
// yielding between them: growing a request of megabytes copies, and
// faults in, that many bytes, which a goroutine would otherwise do for
// milliseconds without a scheduling point while the scan waits for a P.
func copyYielding(dst, src []byte) {
	for len(src) > yieldBytes {
		n := copy(dst, src[:yieldBytes])
		dst, src = dst[n:], src[n:]
		runtime.Gosched()
	}
	copy(dst, src)
}

func (c *Channel) tooLarge() error {
	return fault(status.BadRequestTooLarge, "request exceeds MaxMessageSize "+
		strconv.FormatUint(uint64(c.msgLimit), 10)+" or MaxChunkCount "+
		strconv.FormatUint(uint64(c.cfg.MaxChunkCount), 10))
}

// handleCLO processes a CloseSecureChannel request: the channel ends
// without a response (OPC 10000-4 §5.5.3) and ReadRequest returns
// ErrClosed.
func (c *Channel) handleCLO(chunk []byte) error {
	t, err := c.tokenFor(chunk, c.readAt)
	if err != nil {
		return err
	}
	plain, err := openChunk(chunk, symHdrLen, t.crypto, c.lastSeq)
	if err != nil {
		return fault(err.(ua.StatusCode), "CLO chunk failed the security checks")
	}
	if err := c.checkSeq(binary.LittleEndian.Uint32(plain)); err != nil {
		return err
	}
	return ErrClosed
}

// statusOr returns err's ua.StatusCode, or def when it has none.
func statusOr(err error, def ua.StatusCode) ua.StatusCode {
	if code, ok := err.(ua.StatusCode); ok && code.IsBad() {
		return code
	}
	return def
}
