package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
)

// A minimal raw OPC UA client, written with our codec: UA-TCP and a
// SecurityPolicy None secure channel, an anonymous session, and then Read
// requests pre-encoded once and pipelined. It exists to load the server
// while costing far less CPU per request than the server does; it is not
// a general client (no chunked requests, no token renewal, no security).

// Chunk layout of a MSG chunk (OPC 10000-6 §6.7.2), all little-endian:
//
//	0  MessageType "MSG", ChunkType   4  MessageSize
//	8  SecureChannelId               12  TokenId
//	16 SequenceNumber                20  RequestId
//	24 body: the service message (type NodeId, then the structure)
const (
	hdrLen     = 8
	offSeq     = 16
	offReqID   = 20
	msgHdrLen  = 24
	policyNone = server.SecurityPolicyNone

	clientBufferSize = 65535 // our Hello's receive and send buffer sizes
)

// client is one connection with an activated session.
type client struct {
	nc       net.Conn
	url      string
	chID     uint32
	tokID    uint32
	seq      uint32 // sequence number of the last chunk sent
	reqID    uint32 // request id of the last handshake request
	handle   uint32
	token    ua.NodeID // the session's authentication token
	maxChunk int       // the server's receive buffer: the largest chunk we may send

	sc   *spinConn // non-nil: reads spin first (load -spin)
	rbuf []byte    // receive buffer: unread bytes are rbuf[r:w]
	r, w int
	wbuf []byte
}

// dial connects to addr and runs the handshake as named steps: Hello,
// OpenSecureChannel (None), CreateSession, ActivateSession (anonymous).
func dial(addr string, timeout time.Duration) (*client, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	c := &client{nc: nc, url: "opc.tcp://" + addr, rbuf: make([]byte, 1<<18)}
	nc.SetDeadline(time.Now().Add(timeout))
	if err := c.handshake(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("uabench: handshake with %s: %w", addr, err)
	}
	nc.SetDeadline(time.Time{})
	return c, nil
}

func (c *client) handshake() error {
	if err := c.hello(); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	if err := c.openSecureChannel(); err != nil {
		return fmt.Errorf("OpenSecureChannel: %w", err)
	}
	policyID, err := c.createSession()
	if err != nil {
		return fmt.Errorf("CreateSession: %w", err)
	}
	if err := c.activateSession(policyID); err != nil {
		return fmt.Errorf("ActivateSession: %w", err)
	}
	return nil
}

// hello sends a Hello and reads the Acknowledge.
func (c *client) hello() error {
	b := append(c.wbuf[:0], "HELF\x00\x00\x00\x00"...)
	b = ua.AppendUint32(b, 0) // ProtocolVersion
	b = ua.AppendUint32(b, clientBufferSize)
	b = ua.AppendUint32(b, clientBufferSize)
	b = ua.AppendUint32(b, 0) // MaxMessageSize: no limit
	b = ua.AppendUint32(b, 0) // MaxChunkCount: no limit
	b = ua.AppendString(b, c.url)
	putSize(b)
	if _, err := c.nc.Write(b); err != nil {
		return err
	}
	chunk, err := c.readChunk()
	if err != nil {
		return err
	}
	if string(chunk[:4]) != "ACKF" || len(chunk) < hdrLen+20 {
		return fmt.Errorf("got %q, want an Acknowledge", chunk[:4])
	}
	c.maxChunk = int(binary.LittleEndian.Uint32(chunk[12:])) // its ReceiveBufferSize
	return nil
}

// openSecureChannel issues a SecurityPolicy None channel with a token of
// an hour, longer than any run.
func (c *client) openSecureChannel() error {
	b := append(c.wbuf[:0], "OPNF\x00\x00\x00\x00"...)
	b = ua.AppendUint32(b, 0) // SecureChannelId: none yet
	b = ua.AppendString(b, policyNone)
	b = ua.AppendByteString(b, nil) // SenderCertificate
	b = ua.AppendByteString(b, nil) // ReceiverCertificateThumbprint
	c.seq++
	c.reqID++
	b = ua.AppendUint32(b, c.seq)
	b = ua.AppendUint32(b, c.reqID)
	b = ua.AppendMessage(b, &ua.OpenSecureChannelRequest{
		RequestHeader:     ua.RequestHeader{Timestamp: time.Now(), RequestHandle: c.nextHandle()},
		RequestType:       ua.SecurityTokenRequestTypeIssue,
		SecurityMode:      ua.MessageSecurityModeNone,
		RequestedLifetime: 3600000,
	})
	putSize(b)
	if _, err := c.nc.Write(b); err != nil {
		return err
	}
	chunk, err := c.readChunk()
	if err != nil {
		return err
	}
	if string(chunk[:4]) != "OPNF" {
		return fmt.Errorf("got %q, want an OpenSecureChannel response", chunk[:4])
	}
	d := ua.NewDecoder(chunk[12:])
	d.ReadString()        // SecurityPolicyUri
	d.ReadByteString(nil) // SenderCertificate
	d.ReadByteString(nil) // ReceiverCertificateThumbprint
	d.ReadUint32()        // SequenceNumber
	if id := d.ReadUint32(); id != c.reqID {
		return fmt.Errorf("response to request %d, want %d", id, c.reqID)
	}
	var resp ua.OpenSecureChannelResponse
	if err := ua.DecodeMessageInto(d, &resp); err != nil {
		return err
	}
	if err := resp.ResponseHeader.ServiceResult; err.IsBad() {
		return err
	}
	c.chID, c.tokID = resp.SecurityToken.ChannelID, resp.SecurityToken.TokenID
	return nil
}

// createSession creates a session and returns the PolicyId of the
// server's anonymous user token policy.
func (c *client) createSession() (string, error) {
	var resp ua.CreateSessionResponse
	err := c.call(&ua.CreateSessionRequest{
		RequestHeader: ua.RequestHeader{Timestamp: time.Now(), RequestHandle: c.nextHandle()},
		ClientDescription: ua.ApplicationDescription{
			ApplicationURI:  "urn:edged:uabench",
			ApplicationName: ua.LocalizedText{Text: "uabench"},
			ApplicationType: ua.ApplicationTypeClient,
		},
		EndpointURL:             c.url,
		SessionName:             "uabench",
		RequestedSessionTimeout: 60000,
	}, &resp)
	if err != nil {
		return "", err
	}
	c.token = resp.AuthenticationToken
	for _, ep := range resp.ServerEndpoints {
		for _, p := range ep.UserIdentityTokens {
			if p.TokenType == ua.UserTokenTypeAnonymous {
				return p.PolicyID, nil
			}
		}
	}
	return "", errors.New("the server offers no anonymous user token policy")
}

func (c *client) activateSession(policyID string) error {
	var resp ua.ActivateSessionResponse
	return c.call(&ua.ActivateSessionRequest{
		RequestHeader: ua.RequestHeader{AuthenticationToken: c.token, Timestamp: time.Now(), RequestHandle: c.nextHandle()},
		UserIdentityToken: ua.ExtensionObject{
			Body: &ua.AnonymousIdentityToken{PolicyID: policyID},
		},
	}, &resp)
}

// close closes the session and the secure channel, then the connection.
// Every request must have been answered.
func (c *client) close(timeout time.Duration) error {
	c.nc.SetDeadline(time.Now().Add(timeout))
	var resp ua.CloseSessionResponse
	err := c.call(&ua.CloseSessionRequest{
		RequestHeader:       ua.RequestHeader{AuthenticationToken: c.token, Timestamp: time.Now(), RequestHandle: c.nextHandle()},
		DeleteSubscriptions: true,
	}, &resp)
	if err == nil {
		c.reqID++
		b := c.appendChunk(c.wbuf[:0], "CLOF", c.reqID, &ua.CloseSecureChannelRequest{
			RequestHeader: ua.RequestHeader{AuthenticationToken: c.token, Timestamp: time.Now(), RequestHandle: c.nextHandle()},
		})
		_, err = c.nc.Write(b)
	}
	if cerr := c.nc.Close(); err == nil {
		err = cerr
	}
	return err
}

func (c *client) nextHandle() uint32 {
	c.handle++
	return c.handle
}

// appendChunk appends req as one chunk of type typ (with the chunk type,
// e.g. "MSGF") under the channel's token.
func (c *client) appendChunk(b []byte, typ string, reqID uint32, req ua.Body) []byte {
	start := len(b)
	b = append(b, typ...)
	b = append(b, 0, 0, 0, 0)
	b = ua.AppendUint32(b, c.chID)
	b = ua.AppendUint32(b, c.tokID)
	c.seq++
	b = ua.AppendUint32(b, c.seq)
	b = ua.AppendUint32(b, reqID)
	b = ua.AppendMessage(b, req)
	putSize(b[start:])
	return b
}

// call sends req in one chunk and decodes the response into resp; a
// ServiceFault, or a response with a bad ServiceResult, is its status.
func (c *client) call(req, resp ua.Body) error {
	c.reqID++
	c.wbuf = c.appendChunk(c.wbuf[:0], "MSGF", c.reqID, req)
	if len(c.wbuf) > c.maxChunk {
		return fmt.Errorf("request of %d bytes exceeds the server's chunk size %d", len(c.wbuf), c.maxChunk)
	}
	if _, err := c.nc.Write(c.wbuf); err != nil {
		return err
	}
	chunk, err := c.readChunk()
	if err != nil {
		return err
	}
	if string(chunk[:4]) != "MSGF" {
		return fmt.Errorf("got a %q chunk, want a single-chunk response", chunk[:4])
	}
	if id := binary.LittleEndian.Uint32(chunk[offReqID:]); id != c.reqID {
		return fmt.Errorf("response to request %d, want %d", id, c.reqID)
	}
	d := ua.NewDecoder(chunk[msgHdrLen:])
	err = ua.DecodeMessageInto(d, resp)
	var mte *ua.MessageTypeError
	if errors.As(err, &mte) {
		if f, ferr := ua.DecodeMessage(ua.NewDecoder(chunk[msgHdrLen:])); ferr == nil {
			if sf, ok := f.(*ua.ServiceFault); ok {
				return sf.ResponseHeader.ServiceResult
			}
		}
	}
	if err != nil {
		return err
	}
	if rh := responseHeaderOf(resp); rh != nil && rh.ServiceResult.IsBad() {
		return rh.ServiceResult
	}
	return nil
}

func responseHeaderOf(b ua.Body) *ua.ResponseHeader {
	switch r := b.(type) {
	case *ua.CreateSessionResponse:
		return &r.ResponseHeader
	case *ua.ActivateSessionResponse:
		return &r.ResponseHeader
	case *ua.CloseSessionResponse:
		return &r.ResponseHeader
	case *ua.ReadResponse:
		return &r.ResponseHeader
	}
	return nil
}

// readChunk returns the next whole chunk, valid until the next read. A
// UA-TCP Error message is returned as the error it carries.
func (c *client) readChunk() ([]byte, error) {
	for {
		if chunk, ok, err := c.nextChunk(); err != nil || ok {
			return chunk, err
		}
		if err := c.fill(); err != nil {
			return nil, err
		}
	}
}

// nextChunk returns the next whole chunk in the receive buffer, if there
// is one.
func (c *client) nextChunk() ([]byte, bool, error) {
	if c.w-c.r < hdrLen {
		return nil, false, nil
	}
	size := int(binary.LittleEndian.Uint32(c.rbuf[c.r+4:]))
	if size < hdrLen || size > len(c.rbuf) {
		return nil, false, fmt.Errorf("chunk %q of %d bytes", c.rbuf[c.r:c.r+4], size)
	}
	if c.w-c.r < size {
		return nil, false, nil
	}
	chunk := c.rbuf[c.r : c.r+size]
	c.r += size
	if string(chunk[:3]) == "ERR" {
		return nil, false, tcpError(chunk)
	}
	return chunk, true, nil
}

// fill reads as much as there is into the receive buffer, moving the
// unread bytes to its start first.
func (c *client) fill() error {
	if c.r == c.w {
		c.r, c.w = 0, 0
	} else if c.r > 0 {
		c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		c.r = 0
	}
	var n int
	var err error
	if c.sc != nil {
		n, err = c.sc.read(c.rbuf[c.w:])
	} else {
		n, err = c.nc.Read(c.rbuf[c.w:])
	}
	c.w += n
	if err != nil && n == 0 {
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// tcpError returns the status and reason of a UA-TCP Error message.
func tcpError(chunk []byte) error {
	d := ua.NewDecoder(chunk[hdrLen:])
	code := ua.StatusCode(d.ReadUint32())
	reason := d.ReadString()
	return fmt.Errorf("server sent Error %v: %s", code, strconv.Quote(reason))
}

func putSize(b []byte) { binary.LittleEndian.PutUint32(b[4:], uint32(len(b))) }

// Encodings of the response type ids in their four-byte form (encoding
// byte 0x01, namespace 0, UInt16 id), as servers send them.
var (
	readResponseID = fourByteID(634) // ReadResponse_Encoding_DefaultBinary
	faultID        = fourByteID(397) // ServiceFault_Encoding_DefaultBinary
)

func fourByteID(id uint16) uint32 { return 0x01 | uint32(id)<<16 }

// reader is the state of a pipelined run on one connection.
type reader struct {
	c        *client
	inflight int
	template []byte // the MSG chunk of the Read request; seq and id patched per send
	nodes    int    // results expected per response
	verify   bool   // decode every response fully (tests)

	// Per slot: the request id in flight and when it was sent.
	slotID   []uint32
	slotGen  []uint32
	slotSent []int64 // monotonic ns since base
	free     []int   // slots with no request in flight
	batch    []int   // slots appended to wbuf, stamped when written
	base     time.Time

	batchN  int // refill when this many slots are free
	minResp int // bytes of the smallest response chunk seen
	lowat   int // SO_RCVLOWAT set on the connection; 0: not set

	multi    bool // inside a multi-chunk response
	multiOK  bool
	multiReq uint32

	resp ua.ReadResponse // for verify and the slow path
	dec  ua.Decoder

	hist histogram // latencies of responses received while recording

	// Read by the coordinator while the run goes on.
	done   atomic.Uint64 // responses received
	errs   atomic.Uint64 // responses that are not a good Read of nodes good results
	sent   atomic.Uint64
	lastEr atomic.Pointer[string]
}

// Phases of a run, set by the coordinator: warm up (count, do not record
// latencies), measure (record), stop (send no more, drain what is in
// flight, return).
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// slotBits: a request id is its slot in the low bits and the slot's
// generation above, so a response finds its slot without a map even if
// responses came out of order.
const slotBits = 12

func newReader(c *client, req *ua.ReadRequest, inflight int, verify bool) (*reader, error) {
	if inflight < 1 || inflight > 1<<slotBits {
		return nil, fmt.Errorf("uabench: %d requests in flight, want 1..%d", inflight, 1<<slotBits)
	}
	req.RequestHeader = ua.RequestHeader{AuthenticationToken: c.token, Timestamp: time.Now(), RequestHandle: c.nextHandle()}
	seq := c.seq
	tpl := c.appendChunk(nil, "MSGF", 0, req)
	c.seq = seq // appendChunk took one; the sends take them from now on
	if len(tpl) > c.maxChunk {
		return nil, fmt.Errorf("uabench: Read request of %d bytes exceeds the server's chunk size %d", len(tpl), c.maxChunk)
	}
	r := &reader{
		c: c, inflight: inflight, template: tpl, nodes: len(req.NodesToRead), verify: verify,
		slotID: make([]uint32, inflight), slotGen: make([]uint32, inflight), slotSent: make([]int64, inflight),
		free: make([]int, 0, inflight), batch: make([]int, 0, inflight),
		batchN: max(1, inflight/4),
	}
	for i := inflight - 1; i >= 0; i-- {
		r.free = append(r.free, i)
	}
	r.c.wbuf = make([]byte, 0, inflight*len(tpl))
	return r, nil
}

// enqueue appends a request in slot s to the write buffer.
func (r *reader) enqueue(s int) {
	c := r.c
	r.slotGen[s]++
	id := r.slotGen[s]<<slotBits | uint32(s)
	r.slotID[s] = id
	start := len(c.wbuf)
	c.wbuf = append(c.wbuf, r.template...)
	c.seq++
	binary.LittleEndian.PutUint32(c.wbuf[start+offSeq:], c.seq)
	binary.LittleEndian.PutUint32(c.wbuf[start+offReqID:], id)
	r.batch = append(r.batch, s)
}

// flush writes the queued requests in one write, stamping their send time.
func (r *reader) flush() error {
	if len(r.batch) == 0 {
		return nil
	}
	now := int64(time.Since(r.base))
	for _, s := range r.batch {
		r.slotSent[s] = now
	}
	r.sent.Add(uint64(len(r.batch)))
	r.batch = r.batch[:0]
	_, err := r.c.nc.Write(r.c.wbuf)
	r.c.wbuf = r.c.wbuf[:0]
	return err
}

// run keeps inflight requests outstanding, batching the requests that
// replace answered ones into one write per read, until phase says stop,
// maxRequests have been sent (0: no limit), or the connection fails; it
// then waits for the requests in flight and returns.
func (r *reader) run(phase *atomic.Int32, maxRequests uint64) error {
	r.base = time.Now()
	var sent uint64
	more := func() bool { return phase.Load() != phaseStop && (maxRequests == 0 || sent < maxRequests) }
	for len(r.free) > 0 && more() {
		s := r.free[len(r.free)-1]
		r.free = r.free[:len(r.free)-1]
		r.enqueue(s)
		sent++
	}
	if err := r.flush(); err != nil {
		return err
	}
	for len(r.free) < r.inflight {
		if err := r.setLowat(); err != nil {
			return err
		}
		if err := r.c.fill(); err != nil {
			return err
		}
		now := int64(time.Since(r.base))
		record := phase.Load() == phaseMeasure
		var done, errs uint64
		for {
			chunk, ok, err := r.c.nextChunk()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			id, complete, good := r.response(chunk)
			if !complete {
				continue
			}
			s := int(id & (1<<slotBits - 1))
			if s >= r.inflight || r.slotID[s] != id {
				return fmt.Errorf("uabench: response to request %#x, which is not in flight", id)
			}
			r.slotID[s] = 0
			r.free = append(r.free, s)
			done++
			if !good {
				errs++
			}
			if record {
				r.hist.add(uint64(max(now-r.slotSent[s], 0)))
			}
			if r.minResp == 0 || len(chunk) < r.minResp {
				r.minResp = len(chunk)
			}
		}
		r.done.Add(done)
		if errs > 0 {
			r.errs.Add(errs)
		}
		// Refill once a batch of slots is free: many requests per write.
		if len(r.free) >= r.batchN {
			for len(r.free) > 0 && more() {
				s := r.free[len(r.free)-1]
				r.free = r.free[:len(r.free)-1]
				r.enqueue(s)
				sent++
			}
		}
		if err := r.flush(); err != nil {
			return err
		}
	}
	if r.lowat > 1 {
		r.lowat = 1
		return setRcvLowat(r.c.nc, 1) // for what follows, e.g. close
	}
	return nil
}

// setLowat sets the socket's SO_RCVLOWAT so that the reader wakes up once
// a batch of responses is there rather than for each one: the server
// writes every response on its own, and a load process that reads each
// one as it comes spends as much CPU as the server. The mark never
// exceeds what the requests in flight will bring, so no read waits for
// bytes that cannot come.
func (r *reader) setLowat() error {
	if r.batchN <= 1 || r.minResp == 0 {
		return nil
	}
	k := min(r.batchN, r.inflight-len(r.free))
	want := 1
	if k > 1 {
		want = min((k-1)*r.minResp+1, maxLowat)
	}
	if want == r.lowat {
		return nil
	}
	r.lowat = want
	return setRcvLowat(r.c.nc, want)
}

// maxLowat bounds SO_RCVLOWAT well below the smallest receive buffer.
const maxLowat = 32 << 10

// response parses a chunk just enough: its request id, and whether it
// completes a good Read response (type ReadResponse, good ServiceResult,
// nodes results, the first one good).
func (r *reader) response(chunk []byte) (id uint32, complete, good bool) {
	if len(chunk) < msgHdrLen || string(chunk[:3]) != "MSG" {
		r.fail("unexpected chunk " + strconv.Quote(string(chunk[:4])))
		return 0, false, false
	}
	id = binary.LittleEndian.Uint32(chunk[offReqID:])
	switch chunk[3] {
	case 'F':
		if r.multi {
			r.multi = false
			return id, id == r.multiReq, r.multiOK
		}
		return id, true, r.check(chunk[msgHdrLen:], true)
	case 'C':
		if !r.multi {
			r.multi, r.multiReq, r.multiOK = true, id, r.check(chunk[msgHdrLen:], false)
		}
		return id, false, false
	default: // 'A': the server aborted the response
		r.multi = false
		r.fail("response aborted")
		return id, true, false
	}
}

// check looks at the start of a Read response message. whole says the
// message is complete (so it can be fully decoded when it needs to be).
func (r *reader) check(msg []byte, whole bool) bool {
	if r.verify && whole {
		return r.decode(msg)
	}
	// Fast path: the layout our server and most others send: type id,
	// ResponseHeader with an empty DiagnosticInfo, a null StringTable and
	// a null AdditionalHeader, then the Results.
	//
	//	0 type id  4 Timestamp  12 RequestHandle  16 ServiceResult
	//	20 DiagnosticInfo mask  21 StringTable length  25 AdditionalHeader (3 bytes)
	//	28 Results length  32 first DataValue's mask
	if len(msg) >= 33 && binary.LittleEndian.Uint32(msg) == readResponseID &&
		msg[20] == 0 && int32(binary.LittleEndian.Uint32(msg[21:])) <= 0 &&
		msg[25] == 0 && msg[26] == 0 && msg[27] == 0 {
		if sc := ua.StatusCode(binary.LittleEndian.Uint32(msg[16:])); sc.IsBad() {
			r.fail("ServiceResult " + sc.String())
			return false
		}
		if n := int32(binary.LittleEndian.Uint32(msg[28:])); n != int32(r.nodes) {
			r.fail(fmt.Sprintf("%d results, want %d", n, r.nodes))
			return false
		}
		if msg[32]&0x02 == 0 { // no StatusCode: Good
			return true
		}
	}
	if len(msg) >= 4 && binary.LittleEndian.Uint32(msg) == faultID && len(msg) >= 20 {
		r.fail("ServiceFault " + ua.StatusCode(binary.LittleEndian.Uint32(msg[16:])).String())
		return false
	}
	if !whole {
		r.fail("unexpected start of a multi-chunk response")
		return false
	}
	return r.decode(msg)
}

// decode decodes a whole Read response and checks every result.
func (r *reader) decode(msg []byte) bool {
	r.dec.Reset(msg)
	if err := ua.DecodeMessageInto(&r.dec, &r.resp); err != nil {
		if f, ferr := ua.DecodeMessage(ua.NewDecoder(msg)); ferr == nil {
			if sf, ok := f.(*ua.ServiceFault); ok {
				err = sf.ResponseHeader.ServiceResult
			}
		}
		r.fail("response: " + err.Error())
		return false
	}
	if sc := r.resp.ResponseHeader.ServiceResult; sc.IsBad() {
		r.fail("ServiceResult " + sc.String())
		return false
	}
	if len(r.resp.Results) != r.nodes {
		r.fail(fmt.Sprintf("%d results, want %d", len(r.resp.Results), r.nodes))
		return false
	}
	for i := range r.resp.Results {
		if sc := r.resp.Results[i].Status; sc.IsBad() || (r.verify && r.resp.Results[i].Value.IsNull()) {
			r.fail(fmt.Sprintf("result %d: status %v, value %v", i, sc, r.resp.Results[i].Value))
			return false
		}
	}
	return true
}

// fail remembers the last error seen in a response.
func (r *reader) fail(s string) { r.lastEr.Store(&s) }
