// Package uaclient is a minimal raw OPC UA client written with our codec,
// for the benchmarks and tests of edged's server (bench/uabench,
// bench/subbench): UA-TCP, a secure channel (SecurityPolicy None, or one of
// the RSA policies with SetSecurity) and an anonymous session. It costs far less CPU per request than the server
// does, so that it can load it, and it exposes the wire: requests can be
// sent without waiting (Send, or AppendRequest and StampChunk for
// pre-encoded batches) and responses read one chunk or one message at a
// time with their request id (ReadChunk, NextChunk, ReadMessage).
//
// It is not a general client: the three RSA policies without certificate
// checks of the server (SetSecurity), no token renewal, requests must fit
// in one chunk; responses of several chunks are reassembled by
// ReadMessage. A Client is not safe for concurrent use: one goroutine
// sends and reads.
package uaclient

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/uasc"
)

// Chunk layout of a MSG chunk (OPC 10000-6 §6.7.2), all little-endian:
//
//	0  MessageType "MSG", ChunkType   4  MessageSize
//	8  SecureChannelId               12  TokenId
//	16 SequenceNumber                20  RequestId
//	24 body: the service message (type NodeId, then the structure)
const (
	HeaderLen    = 8  // UA-TCP message header: type, chunk type, size
	OffSeq       = 16 // offset of the SequenceNumber in a MSG chunk
	OffRequestID = 20 // offset of the RequestId in a MSG chunk
	MsgHeaderLen = 24 // offset of the body in a MSG chunk (SecurityPolicy None)

	policyNone = "http://opcfoundation.org/UA/SecurityPolicy#None"

	bufferSize = 65535   // our Hello's receive and send buffer sizes
	maxMessage = 1 << 24 // largest response ReadMessage reassembles
)

// Client is one connection with (after the handshake) an activated
// session.
type Client struct {
	nc       net.Conn
	url      string
	chID     uint32
	tokID    uint32
	seq      uint32 // sequence number of the last chunk sent
	reqID    uint32 // request id of the last request sent
	handle   uint32
	token    ua.NodeID // the session's authentication token
	maxChunk int       // the server's receive buffer: the largest chunk we may send

	rd   io.Reader // nil: reads go to nc
	rbuf []byte    // receive buffer: unread bytes are rbuf[r:w]
	r, w int
	wbuf []byte
	mbuf []byte // a response of several chunks, reassembled
	dec  ua.Decoder

	// Under SetSecurity: the asymmetric crypto of the handshake, the
	// token's, the nonce the server gave the session and the sealing's
	// scratch buffer.
	sec         *Security
	asym        uasc.ChunkCrypto
	sym         uasc.ChunkCrypto
	srvSeq      uint32 // the sequence number of the server's last chunk (AEAD nonces)
	clientNonce []byte // the session's ClientNonce
	serverNonce []byte
	scratch     []byte
}

// Dial connects to addr and runs the handshake as named steps (Hello,
// OpenSecureChannel, CreateSession, ActivateSession) with the session
// name "uaclient". timeout bounds the connect and the handshake.
func Dial(addr string, timeout time.Duration) (*Client, error) {
	return DialSession(addr, "uaclient", timeout)
}

// DialSession is Dial with a session name.
func DialSession(addr, name string, timeout time.Duration) (*Client, error) {
	return DialSecure(addr, name, nil, timeout)
}

// DialSecure is DialSession over a channel secured by s (nil: None).
func DialSecure(addr, name string, s *Security, timeout time.Duration) (*Client, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	c := New(nc, "opc.tcp://"+addr)
	if s != nil {
		if err := c.SetSecurity(s); err != nil {
			nc.Close()
			return nil, err
		}
	}
	nc.SetDeadline(time.Now().Add(timeout))
	if err := c.Handshake(name); err != nil {
		nc.Close()
		return nil, fmt.Errorf("uaclient: handshake with %s: %w", addr, err)
	}
	nc.SetDeadline(time.Time{})
	return c, nil
}

// dialChannel connects and opens a None channel, without a session.
func dialChannel(addr string, timeout time.Duration) (*Client, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	c := New(nc, "opc.tcp://"+addr)
	nc.SetDeadline(time.Now().Add(timeout))
	if err := c.Hello(); err != nil {
		nc.Close()
		return nil, err
	}
	if err := c.OpenSecureChannel(); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// New returns a client on an open connection to the endpoint url, before
// any handshake step. It turns Nagle's algorithm off on a TCP connection.
func New(nc net.Conn, url string) *Client {
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return &Client{nc: nc, url: url, rbuf: make([]byte, 1<<18)}
}

// Handshake runs Hello, OpenSecureChannel (None), CreateSession with the
// given session name and ActivateSession (anonymous).
func (c *Client) Handshake(name string) error {
	if err := c.Hello(); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	if err := c.OpenSecureChannel(); err != nil {
		return fmt.Errorf("OpenSecureChannel: %w", err)
	}
	policyID, err := c.CreateSession(name)
	if err != nil {
		return fmt.Errorf("CreateSession: %w", err)
	}
	if err := c.ActivateSession(policyID); err != nil {
		return fmt.Errorf("ActivateSession: %w", err)
	}
	return nil
}

// Conn returns the connection, e.g. to set deadlines or socket options.
func (c *Client) Conn() net.Conn { return c.nc }

// MaxChunk returns the largest chunk the server accepts (its receive
// buffer size from the Acknowledge).
func (c *Client) MaxChunk() int { return c.maxChunk }

// SetReader makes the client read its responses from r instead of the
// connection (e.g. a reader that polls the socket before blocking); nil
// restores the connection.
func (c *Client) SetReader(r io.Reader) { c.rd = r }

// Hello sends a Hello and reads the Acknowledge.
func (c *Client) Hello() error {
	b := append(c.wbuf[:0], "HELF\x00\x00\x00\x00"...)
	b = ua.AppendUint32(b, 0) // ProtocolVersion
	b = ua.AppendUint32(b, bufferSize)
	b = ua.AppendUint32(b, bufferSize)
	b = ua.AppendUint32(b, 0) // MaxMessageSize: no limit
	b = ua.AppendUint32(b, 0) // MaxChunkCount: no limit
	b = ua.AppendString(b, c.url)
	putSize(b)
	if _, err := c.nc.Write(b); err != nil {
		return err
	}
	chunk, err := c.ReadChunk()
	if err != nil {
		return err
	}
	if string(chunk[:4]) != "ACKF" || len(chunk) < HeaderLen+20 {
		return fmt.Errorf("got %q, want an Acknowledge", chunk[:4])
	}
	c.maxChunk = int(binary.LittleEndian.Uint32(chunk[12:])) // its ReceiveBufferSize
	return nil
}

// OpenSecureChannel issues a channel (SecurityPolicy None, or what
// SetSecurity set) with a token of an hour, longer than any run: under
// None the same steps with a crypto that does nothing.
func (c *Client) OpenSecureChannel() error {
	policy, mode := policyNone, ua.MessageSecurityModeNone
	var cert, thumb, cn []byte
	var eph *ecdh.PrivateKey
	asym := c.asym
	if s := c.sec; s != nil {
		policy, mode, cert, thumb = s.uri(), s.Mode, s.Certificate, secpol.Thumbprint(s.ServerCertificate)
		if s.ECC != nil {
			var err error
			if eph, cn, err = s.ECC.NewEphemeral(); err != nil {
				return err
			}
		} else {
			cn = make([]byte, secpol.NonceLength)
			rand.Read(cn)
		}
	} else {
		r, _ := uasc.PolicyNone.Asymmetric(nil, nil)
		asym = r.Crypto
	}
	b := append(c.wbuf[:0], "OPNF\x00\x00\x00\x00"...)
	b = ua.AppendUint32(b, 0) // SecureChannelId: none yet
	b = ua.AppendString(b, policy)
	b = ua.AppendByteString(b, cert)  // SenderCertificate
	b = ua.AppendByteString(b, thumb) // ReceiverCertificateThumbprint
	secHdr := len(b)
	c.seq++
	c.reqID++
	b = ua.AppendUint32(b, c.seq)
	b = ua.AppendUint32(b, c.reqID)
	b = ua.AppendMessage(b, &ua.OpenSecureChannelRequest{
		RequestHeader:     c.Header(),
		RequestType:       ua.SecurityTokenRequestTypeIssue,
		SecurityMode:      mode,
		ClientNonce:       cn,
		RequestedLifetime: 3600000,
	})
	b, err := uasc.SealChunk(b, 0, secHdr, asym, &c.scratch)
	if err != nil {
		return err
	}
	if _, err := c.nc.Write(b); err != nil {
		return err
	}
	chunk, err := c.ReadChunk()
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
	if d.Err() != nil {
		return d.Err()
	}
	plain, err := uasc.OpenChunk(chunk, 12+d.Offset(), asym, 0)
	if err != nil {
		return fmt.Errorf("the OpenSecureChannel response fails the checks: %w", err)
	}
	if id := binary.LittleEndian.Uint32(plain[4:]); id != c.reqID {
		return fmt.Errorf("response to request %d, want %d", id, c.reqID)
	}
	c.srvSeq = binary.LittleEndian.Uint32(plain)
	var resp ua.OpenSecureChannelResponse
	if err := ua.DecodeMessageInto(ua.NewDecoder(plain[8:]), &resp); err != nil {
		return err
	}
	if err := resp.ResponseHeader.ServiceResult; err.IsBad() {
		return err
	}
	if s := c.sec; s != nil && s.ECC != nil {
		local, remote, err := s.ECC.DeriveKeys(eph, cn, resp.ServerNonce, false)
		if err != nil {
			return err
		}
		enc := s.Mode == ua.MessageSecurityModeSignAndEncrypt
		if s.ECC.AEAD() {
			a, err := s.ECC.NewAEAD(local, remote, enc)
			if err != nil {
				return err
			}
			c.sym = uasc.AEADChunkCrypto(a)
		} else if c.sym, err = s.ECC.NewSymmetric(local, remote, enc); err != nil {
			return err
		}
	} else if s != nil {
		sn := resp.ServerNonce
		if c.sym, err = s.Policy.NewSymmetric(s.Policy.DeriveKeys(sn, cn), s.Policy.DeriveKeys(cn, sn), s.Mode == ua.MessageSecurityModeSignAndEncrypt); err != nil {
			return err
		}
	}
	c.chID, c.tokID = resp.SecurityToken.ChannelID, resp.SecurityToken.TokenID
	return nil
}

// CreateSession creates a session named name and returns the PolicyId of
// the server's anonymous user token policy.
func (c *Client) CreateSession(name string) (string, error) {
	var resp ua.CreateSessionResponse
	req := &ua.CreateSessionRequest{
		RequestHeader: c.Header(),
		ClientDescription: ua.ApplicationDescription{
			ApplicationURI:  "urn:edged:" + name,
			ApplicationName: ua.LocalizedText{Text: name},
			ApplicationType: ua.ApplicationTypeClient,
		},
		EndpointURL:             c.url,
		SessionName:             name,
		RequestedSessionTimeout: 60000,
	}
	if c.sec != nil {
		req.ClientDescription.ApplicationURI = c.sec.ApplicationURI
		req.ClientCertificate = c.sec.Certificate
		req.ClientNonce = make([]byte, secpol.NonceLength)
		rand.Read(req.ClientNonce)
		c.clientNonce = req.ClientNonce
	}
	if err := c.Call(req, &resp); err != nil {
		return "", err
	}
	c.token = resp.AuthenticationToken
	c.serverNonce = resp.ServerNonce
	for _, ep := range resp.ServerEndpoints {
		for _, p := range ep.UserIdentityTokens {
			if p.TokenType == ua.UserTokenTypeAnonymous {
				return p.PolicyID, nil
			}
		}
	}
	return "", errors.New("the server offers no anonymous user token policy")
}

// ActivateSession activates the session with an anonymous identity token
// of the given policy.
func (c *Client) ActivateSession(policyID string) error {
	var resp ua.ActivateSessionResponse
	req := &ua.ActivateSessionRequest{
		RequestHeader: c.Header(),
		UserIdentityToken: ua.ExtensionObject{
			Body: &ua.AnonymousIdentityToken{PolicyID: policyID},
		},
	}
	if c.sec != nil {
		// Proof of our key: the server's certificate and its nonce.
		data := append(append([]byte(nil), c.sec.ServerCertificate...), c.serverNonce...)
		if p := c.sec.ECC; p != nil && p.Enhanced() {
			// Bound to the channel: ChannelThumbprint‖server
			// nonce‖H(server certificate) twice‖H(ours)‖our nonce.
			data = append(append([]byte(nil), uasc.ClientChannelThumbprint(c.asym)...), c.serverNonce...)
			for _, cert := range [][]byte{c.sec.ServerCertificate, c.sec.ServerCertificate, c.sec.Certificate} {
				data = append(data, p.HashCertificate(cert)...)
			}
			data = append(data, c.clientNonce...)
		}
		sd, err := c.sec.sign(data)
		if err != nil {
			return err
		}
		req.ClientSignature = sd
	}
	return c.Call(req, &resp)
}

// Close closes the session (deleting its subscriptions) and the secure
// channel, then the connection. Every request must have been answered.
func (c *Client) Close(timeout time.Duration) error {
	c.nc.SetDeadline(time.Now().Add(timeout))
	var resp ua.CloseSessionResponse
	err := c.Call(&ua.CloseSessionRequest{
		RequestHeader:       c.Header(),
		DeleteSubscriptions: true,
	}, &resp)
	if err == nil {
		c.reqID++
		b := c.appendChunk(c.wbuf[:0], "CLOF", c.reqID, &ua.CloseSecureChannelRequest{RequestHeader: c.Header()})
		_, err = c.nc.Write(b)
	}
	if cerr := c.nc.Close(); err == nil {
		err = cerr
	}
	return err
}

// CloseChannel closes a channel without a session: CloseSecureChannel,
// then the connection.
func (c *Client) CloseChannel() error {
	c.reqID++
	b := c.appendChunk(c.wbuf[:0], "CLOF", c.reqID, &ua.CloseSecureChannelRequest{RequestHeader: c.Header()})
	_, err := c.nc.Write(b)
	if cerr := c.nc.Close(); err == nil {
		err = cerr
	}
	return err
}

// Header returns a request header for the next request: the session's
// authentication token, the time now and a fresh request handle.
func (c *Client) Header() ua.RequestHeader {
	return ua.RequestHeader{AuthenticationToken: c.token, Timestamp: time.Now(), RequestHandle: c.NextHandle()}
}

// Token returns the session's authentication token.
func (c *Client) Token() ua.NodeID { return c.token }

// NextHandle returns a fresh request handle.
func (c *Client) NextHandle() uint32 {
	c.handle++
	return c.handle
}

// NextRequestID returns a fresh request id, for AppendRequest.
func (c *Client) NextRequestID() uint32 {
	c.reqID++
	return c.reqID
}

// appendChunk appends req as one chunk of type typ (with the chunk type,
// e.g. "MSGF") under the channel's token, with the next sequence number.
func (c *Client) appendChunk(b []byte, typ string, reqID uint32, req ua.Body) []byte {
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
	if c.sym != nil {
		b, _ = uasc.SealChunk(b, start, symHdrLen, c.sym, &c.scratch)
	}
	return b
}

// AppendRequest appends req to b as one MSG chunk with request id reqID
// and the next sequence number; the caller writes b to Conn (several
// requests in one write if it likes), in the order they were appended.
func (c *Client) AppendRequest(b []byte, reqID uint32, req ua.Body) []byte {
	return c.appendChunk(b, "MSGF", reqID, req)
}

// Template returns req encoded as one MSG chunk whose sequence number and
// request id StampChunk (or AppendStamped) fills in on each send of a
// copy; it takes no sequence number itself. Under SetSecurity it is the
// chunk's plaintext, which AppendStamped seals.
func (c *Client) Template(req ua.Body) ([]byte, error) {
	seq, sym := c.seq, c.sym
	c.sym = nil
	tpl := c.appendChunk(nil, "MSGF", 0, req)
	c.seq, c.sym = seq, sym
	if len(tpl) > c.maxChunk {
		return nil, fmt.Errorf("uaclient: request of %d bytes exceeds the server's chunk size %d", len(tpl), c.maxChunk)
	}
	return tpl, nil
}

// StampChunk gives a copy of a Template chunk the next sequence number and
// the request id reqID.
func (c *Client) StampChunk(chunk []byte, reqID uint32) {
	c.seq++
	binary.LittleEndian.PutUint32(chunk[OffSeq:], c.seq)
	binary.LittleEndian.PutUint32(chunk[OffRequestID:], reqID)
}

// Send writes req in one chunk without waiting for the response and
// returns its request id.
func (c *Client) Send(req ua.Body) (uint32, error) {
	id := c.NextRequestID()
	c.wbuf = c.appendChunk(c.wbuf[:0], "MSGF", id, req)
	if len(c.wbuf) > c.maxChunk {
		return 0, fmt.Errorf("uaclient: request of %d bytes exceeds the server's chunk size %d", len(c.wbuf), c.maxChunk)
	}
	_, err := c.nc.Write(c.wbuf)
	return id, err
}

// Call sends req and decodes its response into resp; see Decode for the
// errors. No other request may be in flight: the next message must be
// the response.
func (c *Client) Call(req, resp ua.Body) error {
	id, err := c.Send(req)
	if err != nil {
		return err
	}
	got, msg, err := c.ReadMessage()
	if err != nil {
		return err
	}
	if got != id {
		return fmt.Errorf("uaclient: response to request %d, want %d", got, id)
	}
	return c.Decode(msg, resp)
}

// Decode decodes the service message msg (from ReadMessage) into resp. A
// ServiceFault, or a response with a bad ServiceResult, is its status
// (a ua.StatusCode). Decoding into the same resp again reuses its slices
// as ua.DecodeMessageInto does: a good response costs no allocation.
func (c *Client) Decode(msg []byte, resp ua.Body) error {
	c.dec.Reset(msg)
	if err := ua.DecodeMessageInto(&c.dec, resp); err != nil {
		if mte := (*ua.MessageTypeError)(nil); errors.As(err, &mte) {
			if sc, ok := ServiceResult(msg); ok && sc.IsBad() {
				return sc // a ServiceFault
			}
		}
		return err
	}
	if sc, ok := ServiceResult(msg); ok && sc.IsBad() {
		return sc
	}
	return nil
}

// ServiceResult returns the ServiceResult of the response message msg
// (every response, ServiceFault included, starts with a ResponseHeader).
func ServiceResult(msg []byte) (ua.StatusCode, bool) {
	d := ua.NewDecoder(msg)
	var typeID ua.NodeID
	typeID.Decode(d)
	d.ReadInt64()  // Timestamp
	d.ReadUint32() // RequestHandle
	sc := ua.StatusCode(d.ReadUint32())
	return sc, d.Err() == nil
}

// ReadMessage reads the next response: its request id and its service
// message (type NodeId and structure), valid until the next read. The
// chunks of a response of several chunks are reassembled; an aborted one
// is an error with the status it carries. A read error (e.g. a deadline)
// between two chunks of one response loses the chunks read so far.
func (c *Client) ReadMessage() (reqID uint32, msg []byte, err error) {
	multi := false
	for {
		chunk, err := c.ReadChunk()
		if err != nil {
			return 0, nil, err
		}
		if len(chunk) < MsgHeaderLen || string(chunk[:3]) != "MSG" {
			return 0, nil, fmt.Errorf("uaclient: unexpected chunk %q", chunk[:4])
		}
		id := binary.LittleEndian.Uint32(chunk[OffRequestID:])
		body := chunk[MsgHeaderLen:]
		switch chunk[3] {
		case 'F':
			if !multi {
				return id, body, nil
			}
			if id != reqID {
				return 0, nil, fmt.Errorf("uaclient: chunk of request %d inside the response to %d", id, reqID)
			}
			c.mbuf = append(c.mbuf, body...)
			return id, c.mbuf, nil
		case 'C':
			if !multi {
				multi, reqID, c.mbuf = true, id, c.mbuf[:0]
			} else if id != reqID {
				return 0, nil, fmt.Errorf("uaclient: chunk of request %d inside the response to %d", id, reqID)
			}
			if len(c.mbuf)+len(body) > maxMessage {
				return 0, nil, fmt.Errorf("uaclient: response to request %d exceeds %d bytes", id, maxMessage)
			}
			c.mbuf = append(c.mbuf, body...)
		default: // 'A': the server aborted the response
			d := ua.NewDecoder(body)
			code := ua.StatusCode(d.ReadUint32())
			return id, nil, fmt.Errorf("uaclient: response to request %d aborted: %w (%s)", id, code, strconv.Quote(d.ReadString()))
		}
	}
}

// RequestID returns the request id of a MSG chunk (from ReadChunk or
// NextChunk); 0 for a chunk too short to be one.
func RequestID(chunk []byte) uint32 {
	if len(chunk) < MsgHeaderLen {
		return 0
	}
	return binary.LittleEndian.Uint32(chunk[OffRequestID:])
}

// ReadChunk returns the next whole chunk, valid until the next read. A
// UA-TCP Error message is returned as the error it carries.
func (c *Client) ReadChunk() ([]byte, error) {
	for {
		if chunk, ok, err := c.NextChunk(); err != nil || ok {
			return chunk, err
		}
		if err := c.Fill(); err != nil {
			return nil, err
		}
	}
}

// NextChunk returns the next whole chunk in the receive buffer, if there
// is one, without reading the connection.
func (c *Client) NextChunk() ([]byte, bool, error) {
	if c.w-c.r < HeaderLen {
		return nil, false, nil
	}
	size := int(binary.LittleEndian.Uint32(c.rbuf[c.r+4:]))
	if size < HeaderLen || size > len(c.rbuf) {
		return nil, false, fmt.Errorf("uaclient: chunk %q of %d bytes", c.rbuf[c.r:c.r+4], size)
	}
	if c.w-c.r < size {
		return nil, false, nil
	}
	chunk := c.rbuf[c.r : c.r+size]
	c.r += size
	if string(chunk[:3]) == "ERR" {
		return nil, false, tcpError(chunk)
	}
	if c.sym != nil && string(chunk[:3]) == "MSG" {
		// Decrypted and checked in place; the chunk is cut to its
		// plaintext, so the body is where it is under None.
		plain, err := uasc.OpenChunk(chunk, symHdrLen, c.sym, c.srvSeq)
		if err != nil {
			return nil, false, fmt.Errorf("uaclient: a response chunk fails the security checks: %w", err)
		}
		c.srvSeq = binary.LittleEndian.Uint32(plain)
		chunk = chunk[:symHdrLen+len(plain)]
	}
	return chunk, true, nil
}

// Fill reads as much as there is into the receive buffer (one read),
// moving the unread bytes to its start first. Chunks returned before are
// no longer valid.
func (c *Client) Fill() error {
	if c.r == c.w {
		c.r, c.w = 0, 0
	} else if c.r > 0 {
		c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		c.r = 0
	}
	var n int
	var err error
	if c.rd != nil {
		n, err = c.rd.Read(c.rbuf[c.w:])
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
	d := ua.NewDecoder(chunk[HeaderLen:])
	code := ua.StatusCode(d.ReadUint32())
	reason := d.ReadString()
	return fmt.Errorf("uaclient: server sent Error %w: %s", code, strconv.Quote(reason))
}

func putSize(b []byte) { binary.LittleEndian.PutUint32(b[4:], uint32(len(b))) }

// FourByteID returns the encoding of a namespace-0 numeric type id in its
// four-byte form (encoding byte 0x01, namespace 0, UInt16 id) as a
// little-endian uint32, the way servers send response type ids: a cheap
// comparison with the first four bytes of a message.
func FourByteID(id uint16) uint32 { return 0x01 | uint32(id)<<16 }
