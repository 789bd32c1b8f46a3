package uasc

import (
	"sync"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// sender frames outgoing messages into a shared pending buffer and writes
// it out; concurrent writers coalesce. A writer appends its chunks (taking
// sequence numbers in wire order) under mu; if no write is in progress it
// becomes the flusher: it takes the whole pending buffer and writes it in
// one Write, outside mu, while others keep appending to the spare buffer.
// A writer returns once the batch holding its bytes has been written, so
// every caller learns the fate of its own response and has at most one
// response queued (natural backpressure). QueueResponse appends without
// writing: its bytes leave with the next flush, whoever does it. The two
// buffers are swapped and reused: steady state allocates nothing.
//
// PostResponse appends like QueueResponse and hands the write of its batch
// to a goroutine of its own (one per batch, however many responses are
// posted into it), which becomes the batch's flusher or, while a flush is
// in progress, waits on cond like any writer and takes the batch when that
// flush ends, unless a writer took it first. So a poster never waits for
// the network, and its bytes leave without waiting for a later writer.
type sender struct {
	mu       sync.Mutex
	cond     sync.Cond // signalled when a flush ends; L is &mu
	buf      []byte    // chunks waiting for the next write
	spare    []byte    // the other buffer, while not being written
	flushing bool
	taken    uint64 // batches taken for writing; buf is batch taken+1
	written  uint64 // batches whose write has ended
	sent     uint64 // bytes written (WriteRoom's remembered room)
	errBatch uint64 // first batch that failed (err != nil)
	posted   uint64 // last batch whose write a PostResponse goroutine owes
	err      error  // sticky
	seq      uint32 // sequence number of the last chunk sent
	tok      *token // token that secures MSG chunks we send
	scratch  []byte // for encryption
}

// TrimSendBuffers releases the send buffers that grew beyond
// trimmedSendBuffer, unless something is queued or being written: the
// server calls it after the responses of the session services, which
// carry certificates and endpoints and come once a session, so that a
// connection does not keep their size for its life. The next response
// grows a buffer again as far as it needs; steady state allocates
// nothing.
func (c *Channel) TrimSendBuffers() {
	s := &c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flushing || len(s.buf) > 0 {
		return
	}
	if cap(s.buf) > trimmedSendBuffer {
		s.buf = nil
	}
	if cap(s.spare) > trimmedSendBuffer {
		s.spare = nil
	}
}

// trimmedSendBuffer is the largest send buffer TrimSendBuffers keeps.
const trimmedSendBuffer = 4 << 10

// WriteResponse sends msg (type NodeId + body) as the response to
// requestID, split into chunks as negotiated. A multi-chunk response leaves
// in one write; responses queued by several goroutines (and by
// QueueResponse) are coalesced into one write. WriteResponse returns when
// its chunks have been written (or the write failed); each write is
// bounded by Config.WriteTimeout. msg is not retained after the call
// returns.
//
// A response larger than the client accepts (its Hello's MaxMessageSize
// or MaxChunkCount) is not sent: the client gets a ServiceFault with
// Bad_ResponseTooLarge for the request handle read from msg instead, and
// WriteResponse returns status.BadResponseTooLarge; the channel stays
// usable. Any other error is sticky: the channel is dead.
func (c *Channel) WriteResponse(requestID uint32, msg []byte) error {
	return c.writeResponse(requestID, msg, false)
}

// QueueResponse is WriteResponse for pipelined requests: it frames msg
// into the send buffer like WriteResponse but does not write it, so that
// the responses to the requests a client pipelined leave in one write.
// The queued bytes are written by the next WriteResponse or Flush (from
// any goroutine), by ReadRequest before it waits for the connection, or
// by QueueResponse itself once they reach the negotiated send buffer
// size (the client's ReceiveBufferSize, at most Config.SendBufferSize),
// which bounds the memory of a channel. Use it while Buffered reports the
// next request ready: the response to the last one of a batch goes with
// WriteResponse (or QueueResponse and then Flush).
//
// It returns nil once the response is queued (or written, at the bound),
// status.BadResponseTooLarge as WriteResponse does, or the sticky error.
func (c *Channel) QueueResponse(requestID uint32, msg []byte) error {
	return c.writeResponse(requestID, msg, true)
}

// PostResponse is WriteResponse without the wait, for a goroutine that
// must not block on one client's socket (the subscription manager answers
// the Publish requests of every session): it frames msg into the send
// buffer as QueueResponse does, under the same lock, so sequence numbers
// stay in wire order with every other writer, and returns at once. The
// bytes are written in the background: by a goroutine PostResponse starts
// for the pending batch (one per batch), or by whichever writer takes the
// batch first. A client that stops reading thus delays only its own
// channel. Its memory stays bounded as long as the caller posts at most
// one response per request read: before ReadRequest waits for more input
// it writes the pending bytes, or waits for them to be written.
//
// It returns nil once the response is framed, status.BadResponseTooLarge
// as WriteResponse does, or the sticky error of an earlier failure. A
// failure of the background write is sticky as any other: the connection
// is closed, so ReadRequest fails, and later calls return the error.
func (c *Channel) PostResponse(requestID uint32, msg []byte) error {
	s := &c.s
	s.mu.Lock()
	tooLarge, err := c.appendResponseLocked(requestID, msg)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if my := s.taken + 1; s.posted < my {
		s.posted = my
		go c.flushPosted(my)
	}
	s.mu.Unlock()
	return tooLarge
}

// flushPosted writes batch my for PostResponse, unless a writer did or
// does first. A failure is sticky and closes the connection (writeOut);
// the channel's users learn of it from their next call.
func (c *Channel) flushPosted(my uint64) {
	c.s.mu.Lock()
	c.flushBatch(my)
}

// Flush writes the responses queued by QueueResponse and returns once they
// have been written (also when a concurrent WriteResponse took them into
// its write), or the sticky error.
func (c *Channel) Flush() error {
	s := &c.s
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	my := s.taken // nothing queued: the write in progress, if any
	if len(s.buf) > 0 {
		my++
	}
	return c.flushBatch(my)
}

// flushQueued writes what QueueResponse left in the send buffer, if
// anything; ReadRequest calls it before it waits for the connection.
func (c *Channel) flushQueued() error {
	s := &c.s
	s.mu.Lock()
	if len(s.buf) == 0 || s.err != nil {
		s.mu.Unlock()
		return nil // a sticky error is reported by the writers
	}
	return c.flushLocked()
}

func (c *Channel) writeResponse(requestID uint32, msg []byte, queue bool) error {
	s := &c.s
	s.mu.Lock()
	tooLarge, err := c.appendResponseLocked(requestID, msg)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if queue && len(s.buf) < c.maxQueued {
		s.mu.Unlock()
		return tooLarge
	}
	if err := c.flushLocked(); err != nil {
		return err
	}
	return tooLarge
}

// appendResponseLocked frames msg as the response to requestID into s.buf
// (a ServiceFault with Bad_ResponseTooLarge instead when msg is too large
// for the client: tooLarge is then that status). err is the sticky error,
// or the failure to seal a chunk, which becomes it. s.mu is held.
func (c *Channel) appendResponseLocked(requestID uint32, msg []byte) (tooLarge, err error) {
	s := &c.s
	if s.err != nil {
		return nil, s.err
	}
	if !c.fitsClient(len(msg), s.tok) {
		msg = serviceFault(msg, status.BadResponseTooLarge)
		tooLarge = status.BadResponseTooLarge
	}
	start := len(s.buf)
	b, err := c.appendMSG(s.buf, requestID, msg)
	if err != nil {
		s.buf = s.buf[:start]
		s.err = fault(status.BadTcpInternalError, "sealing a chunk: "+err.Error())
		return nil, s.err
	}
	s.buf = b
	return tooLarge, nil
}

// fitsClient reports whether a response of n bytes stays within the
// client's MaxMessageSize and MaxChunkCount.
func (c *Channel) fitsClient(n int, t *token) bool {
	if c.sendMaxMsg != 0 && int64(n) > int64(c.sendMaxMsg) {
		return false
	}
	if c.sendMaxChunks != 0 {
		chunks := (int64(n) + int64(t.maxBody) - 1) / int64(t.maxBody)
		if chunks > int64(c.sendMaxChunks) {
			return false
		}
	}
	return true
}

// serviceFault returns a ServiceFault with code, for the request handle of
// the response msg (its type NodeId, then a ResponseHeader: Timestamp,
// RequestHandle). It allocates; it is for the error path only.
func serviceFault(msg []byte, code ua.StatusCode) []byte {
	d := ua.NewDecoder(msg)
	var typeID ua.NodeID
	typeID.Decode(d)
	d.ReadInt64() // Timestamp
	f := ua.ServiceFault{ResponseHeader: ua.ResponseHeader{
		Timestamp:     time.Now(),
		RequestHandle: d.ReadUint32(),
		ServiceResult: code,
	}}
	return ua.AppendMessage(nil, &f)
}

// appendMSG appends msg as the MSG chunks of the response to requestID.
// s.mu is held.
func (c *Channel) appendMSG(b []byte, requestID uint32, msg []byte) ([]byte, error) {
	s := &c.s
	t := s.tok
	for first := true; first || len(msg) > 0; first = false {
		n := min(len(msg), t.maxBody)
		ct := byte('F')
		if n < len(msg) {
			ct = 'C'
		}
		start := len(b)
		b = appendHeader(b, "MSG", ct)
		b = ua.AppendUint32(b, c.id)
		b = ua.AppendUint32(b, t.id)
		s.seq++ // wraps to 0 after 2^32-1, which both wrap rules allow
		b = ua.AppendUint32(b, s.seq)
		b = ua.AppendUint32(b, requestID)
		b = append(b, msg[:n]...)
		var err error
		if b, err = sealChunk(b, start, symHdrLen, t.crypto, &s.scratch); err != nil {
			return b, err
		}
		msg = msg[n:]
	}
	return b, nil
}

// appendOPN appends the OpenSecureChannel response to s.buf, secured by
// the asymmetric step of the policy. s.mu is held.
func (c *Channel) appendOPN(requestID uint32, resp *ua.OpenSecureChannelResponse, asym AsymmetricResult) error {
	s := &c.s
	b := s.buf
	start := len(b)
	b = appendHeader(b, "OPN", 'F')
	b = ua.AppendUint32(b, c.id)
	b = ua.AppendString(b, c.policy.URI())
	b = ua.AppendByteString(b, asym.SenderCertificate)
	b = ua.AppendByteString(b, asym.ReceiverThumbprint)
	secHdr := len(b) - start
	s.seq++
	b = ua.AppendUint32(b, s.seq)
	b = ua.AppendUint32(b, requestID)
	b = ua.AppendMessage(b, resp)
	if len(b)-start-secHdr-seqHdrLen > maxBodySize(c.sendBufSize, secHdr, asym.Crypto) {
		s.buf = b[:start]
		return fault(status.BadTcpInternalError, "OpenSecureChannel response does not fit one chunk")
	}
	b, err := sealChunk(b, start, secHdr, asym.Crypto, &s.scratch)
	if err != nil {
		s.buf = b[:start]
		return fault(status.BadTcpInternalError, "sealing the OpenSecureChannel response: "+err.Error())
	}
	s.buf = b
	return nil
}

// flushLocked writes what is queued in s.buf, or waits for the flush in
// progress and the next one to do so. It is called with s.mu held and
// returns with it released. It returns nil once the batch holding the
// caller's bytes is written, or the sticky error.
func (c *Channel) flushLocked() error {
	return c.flushBatch(c.s.taken + 1)
}

// flushBatch is flushLocked for the bytes of batch my: it returns once
// batch my has been written (writing it if no one else is), or the sticky
// error. s.mu is held on entry and released on return.
func (c *Channel) flushBatch(my uint64) error {
	s := &c.s
	for {
		if s.written >= my && (s.err == nil || my < s.errBatch) {
			s.mu.Unlock()
			return nil
		}
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return err
		}
		if s.flushing {
			s.cond.Wait()
			continue
		}
		s.flushing = true
		b := s.buf
		s.buf, s.spare = s.spare[:0], nil
		s.taken++
		batch := s.taken
		s.mu.Unlock()

		err := c.writeOut(b)

		s.mu.Lock()
		s.spare = b[:0]
		s.flushing = false
		s.written = batch
		if err == nil {
			s.sent += uint64(len(b))
		}
		if err != nil && s.err == nil {
			s.err, s.errBatch = err, batch
		}
		s.cond.Broadcast()
	}
}

// writeOut writes b in one Write, within WriteTimeout, or within
// CloseTimeout once Close was called (see Close). A failure closes the
// connection, so that the reader stops too.
func (c *Channel) writeOut(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if err := c.nc.SetWriteDeadline(time.Now().Add(c.cfg.WriteTimeout)); err != nil {
		c.nc.Close()
		return err
	}
	if c.closed.Load() {
		// Close ran, or runs: its shorter deadline holds for this write
		// too, whichever of the two deadlines was set last.
		c.nc.SetWriteDeadline(time.Now().Add(c.cfg.CloseTimeout))
	}
	var err error
	if c.raw != nil {
		_, err = c.raw.write(b)
	} else {
		_, err = c.nc.Write(b)
	}
	if err != nil {
		c.nc.Close()
		if c.closed.Load() {
			return ErrClosed
		}
		return &writeError{err}
	}
	return nil
}

// writeError is a failed write to the connection.
type writeError struct{ err error }

func (e *writeError) Error() string { return "uasc: write: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }
