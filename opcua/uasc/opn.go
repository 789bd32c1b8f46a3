package uasc

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// opnState is what handleOPN learns of one chunk of an OpenSecureChannel
// request as its steps go.
type opnState struct {
	chunk  []byte
	first  bool // Issue on a new channel, else Renew
	uri    string
	cert   []byte
	thumb  []byte
	secHdr int // where the sequence header begins
	policy SecurityPolicy
	asym   AsymmetricResult
	reqID  uint32
	body   []byte // the chunk's body; at the final chunk, the request's
}

// handleOPN processes a chunk of an OpenSecureChannel request: Issue on
// a new channel (first), Renew on an open one. A request may come in
// several chunks (OPC 10000-6 §6.7.2), each with the same asymmetric
// security header and secured on its own; the bodies are gathered in
// c.opn, within maxOPNChunks and maxOPNRequest, and the request is
// handled at its final chunk. done reports that it was. The steps read as
// the handshake of crypto/tls does.
func (c *Channel) handleOPN(chunk []byte, first bool) (done bool, err error) {
	if !first && c.cfg.HeavyWork != nil {
		// A renewal's asymmetric cryptography (the server marks the
		// handshake's itself).
		defer c.cfg.HeavyWork()()
	}
	o := &opnState{chunk: chunk, first: first}
	if err := c.readAsymmetricHeader(o); err != nil {
		return false, err
	}
	if err := c.choosePolicy(o); err != nil {
		return false, err
	}
	if err := c.openOPNChunk(o); err != nil {
		return false, err
	}
	if complete, err := c.gatherOPN(o); !complete || err != nil {
		return false, err
	}
	req, err := c.checkOPNRequest(o)
	if err != nil {
		return false, err
	}
	return true, c.issueToken(o, req)
}

// readAsymmetricHeader reads the chunk's asymmetric security header:
// policy URI, sender certificate, receiver thumbprint; a renewal must
// name this channel.
func (c *Channel) readAsymmetricHeader(o *opnState) error {
	var d ua.Decoder
	d.Limits.MaxStringLength = maxPolicyURILength
	d.Limits.MaxByteStringLength = len(o.chunk)
	d.Alias = true
	d.Reset(o.chunk[chanHdrLen:])
	o.uri = d.ReadString()
	o.cert = d.ReadByteString(nil)
	o.thumb = d.ReadByteString(nil)
	if d.Err() != nil {
		return fault(status.BadDecodingError, "malformed asymmetric security header")
	}
	o.secHdr = chanHdrLen + d.Offset()
	if len(o.chunk)-o.secHdr < seqHdrLen {
		return fault(status.BadDecodingError, "OPN chunk too short")
	}
	if !o.first {
		if id := binary.LittleEndian.Uint32(o.chunk[8:]); id != c.id {
			return fault(status.BadSecureChannelIDInvalid, "renewal for secure channel "+strconv.FormatUint(uint64(id), 10))
		}
	}
	return nil
}

// choosePolicy finds the security policy and checks the header's
// certificates: the one offered with the header's URI for an Issue, the
// channel's for a Renew (with the same certificate); a later chunk of a
// request must carry the first chunk's header, checked once.
func (c *Channel) choosePolicy(o *opnState) (err error) {
	o.policy = c.policy
	if c.opnChunks > 0 {
		if !bytes.Equal(o.chunk[chanHdrLen:o.secHdr], c.opnHdr) {
			return fault(status.BadSecurityChecksFailed, "OpenSecureChannel chunks with different security headers")
		}
		o.policy, o.asym = c.opnPolicy, c.opnAsym
		return nil
	}
	if o.first {
		o.policy = nil
		for _, p := range c.cfg.Policies {
			if p.URI() == o.uri {
				o.policy = p
				break
			}
		}
		if o.policy == nil {
			return fault(status.BadSecurityPolicyRejected, "security policy "+strconv.Quote(o.uri)+" not offered")
		}
	} else if o.uri != o.policy.URI() {
		return fault(status.BadSecurityPolicyRejected, "renewal changes the security policy")
	}
	if o.asym, err = o.policy.Asymmetric(o.cert, o.thumb); err != nil {
		return fault(statusOr(err, status.BadSecurityChecksFailed), "asymmetric security header rejected")
	}
	if !o.first && !bytes.Equal(o.asym.PeerCertificate, c.peerCert) {
		return fault(status.BadSecurityChecksFailed, "renewal with another certificate")
	}
	return nil
}

// openOPNChunk verifies and decrypts the chunk and checks its sequence
// number and request id.
func (c *Channel) openOPNChunk(o *opnState) error {
	plain, err := openChunk(o.chunk, o.secHdr, o.asym.Crypto, 0)
	if err != nil {
		return fault(err.(ua.StatusCode), "OPN chunk failed the security checks")
	}
	seq := binary.LittleEndian.Uint32(plain)
	if o.first && c.opnChunks == 0 {
		c.lastSeq = seq // the first chunk sets the start
	} else if err := c.checkSeq(seq); err != nil {
		return err
	}
	o.reqID = binary.LittleEndian.Uint32(plain[4:])
	o.body = plain[seqHdrLen:]
	if c.opnChunks > 0 && o.reqID != c.opnReq {
		return fault(status.BadTcpMessageTypeInvalid, "OpenSecureChannel chunk of request "+strconv.FormatUint(uint64(o.reqID), 10)+
			" inside request "+strconv.FormatUint(uint64(c.opnReq), 10))
	}
	return nil
}

// gatherOPN keeps an intermediate chunk's body ('C'), drops what was
// gathered on an abort ('A'), and at the final chunk makes o.body the
// whole request; complete reports the final chunk.
func (c *Channel) gatherOPN(o *opnState) (complete bool, err error) {
	switch o.chunk[3] {
	case 'A':
		// Abort: drop what was gathered; the channel stays as it was.
		c.resetOPN()
		return false, nil
	case 'C':
		if c.opnChunks == 0 {
			c.opnHdr = append(c.opnHdr[:0], o.chunk[chanHdrLen:o.secHdr]...)
			c.opnPolicy, c.opnAsym, c.opnReq = o.policy, o.asym, o.reqID
		}
		c.opnChunks++
		if c.opnChunks >= maxOPNChunks || len(c.opn)+len(o.body) > maxOPNRequest {
			return false, fault(status.BadTcpMessageTooLarge, "OpenSecureChannel request over "+strconv.Itoa(maxOPNChunks)+
				" chunks or "+strconv.Itoa(maxOPNRequest)+" bytes")
		}
		c.opn = append(c.opn, o.body...)
		return false, nil
	}
	if c.opnChunks > 0 {
		if len(c.opn)+len(o.body) > maxOPNRequest {
			return false, fault(status.BadTcpMessageTooLarge, "OpenSecureChannel request over "+strconv.Itoa(maxOPNRequest)+" bytes")
		}
		c.opn = append(c.opn, o.body...)
		o.body = c.opn
		c.resetOPN()
	}
	return true, nil
}

// resetOPN forgets the chunks gathered (c.opn's bytes stay for reuse).
func (c *Channel) resetOPN() {
	c.opnChunks, c.opn = 0, c.opn[:0]
	c.opnAsym, c.opnPolicy = AsymmetricResult{}, nil
}

// checkOPNRequest decodes the request and checks its type and mode:
// Issue first, Renew after, a mode the policy supports, never another.
func (c *Channel) checkOPNRequest(o *opnState) (*ua.OpenSecureChannelRequest, error) {
	c.dec.Reset(o.body)
	if err := ua.DecodeMessageInto(&c.dec, &c.osc); err != nil {
		return nil, fault(status.BadDecodingError, "malformed OpenSecureChannelRequest: "+err.Error())
	}
	req := &c.osc
	switch {
	case o.first && req.RequestType != ua.SecurityTokenRequestTypeIssue:
		return nil, fault(status.BadRequestTypeInvalid, "first OpenSecureChannel must Issue")
	case !o.first && req.RequestType != ua.SecurityTokenRequestTypeRenew:
		return nil, fault(status.BadRequestTypeInvalid, "OpenSecureChannel on an open channel must Renew")
	case o.first && !o.policy.SupportsMode(req.SecurityMode):
		return nil, fault(status.BadSecurityModeRejected, "security mode "+req.SecurityMode.String()+" not supported by "+o.uri)
	case !o.first && req.SecurityMode != c.mode:
		return nil, fault(status.BadSecurityModeRejected, "renewal changes the security mode")
	}
	return req, nil
}

// issueToken makes the new token (nonce, keys, lifetime), makes it the
// channel's, and answers with it.
func (c *Channel) issueToken(o *opnState, req *ua.OpenSecureChannelRequest) error {
	var nonce, ikm []byte
	var sym ChunkCrypto
	var err error
	if cp, ok := o.policy.(chainedPolicy); ok {
		var prev []byte
		if !o.first {
			prev = c.ikm
		}
		nonce, sym, ikm, err = cp.TokenChained(req.SecurityMode, req.ClientNonce, prev)
	} else {
		nonce, sym, err = o.policy.Token(req.SecurityMode, req.ClientNonce)
	}
	if err != nil {
		return fault(statusOr(err, status.BadSecurityChecksFailed), "key derivation failed")
	}
	if o.first {
		c.policy, c.mode = o.policy, req.SecurityMode
		c.peerCert = o.asym.PeerCertificate
		c.id = c.cfg.NextChannelID()
	}
	c.ikm = ikm
	ea, binds := o.asym.Crypto.(*eccAsym)
	binds = binds && o.first && ea.p.Enhanced()
	if binds {
		// The first response is signed over the request's signature
		// too; its signature is the ChannelThumbprint.
		ea.bind = true
	}
	c.nextTok++
	if c.nextTok == 0 {
		c.nextTok = 1
	}
	now := time.Now()
	life := c.lifetime(req.RequestedLifetime)
	t := &token{
		id:        c.nextTok,
		createdAt: now,
		lifetime:  life,
		expires:   now.Add(life + life/4),
		crypto:    sym,
		maxBody:   maxBodySize(c.sendBufSize, symHdrLen, sym),
	}
	if t.maxBody <= 0 {
		return fault(status.BadTcpInternalError, "send buffer too small for the security policy")
	}
	c.s.mu.Lock()
	if o.first {
		c.cur = t
		c.s.tok = t
		if z, ok := o.policy.(SequenceStart); ok && z.FirstSequenceNumberZero() {
			c.s.seq = ^uint32(0) // the next, the response's, is 0
		}
	} else {
		// Until the client uses the new token, it may go on with the one
		// it used so far, which we go on sending with, or with a token
		// issued since that it has not used yet: a client that renews
		// again before its requests under the last renewal's token got
		// here (a slow or loaded machine) uses that one next.
		if c.s.tok == c.cur {
			c.old = append(c.old[:0], c.cur)
		} else {
			c.old = append(c.old, c.cur)
			if len(c.old) > maxOldTokens {
				c.old = append(c.old[:1], c.old[2:]...) // the oldest unused goes; the used one stays
			}
		}
		c.cur = t
	}
	resp := ua.OpenSecureChannelResponse{
		ResponseHeader: ua.ResponseHeader{
			Timestamp:     now,
			RequestHandle: req.RequestHeader.RequestHandle,
		},
		ServerProtocolVersion: ProtocolVersion,
		SecurityToken: ua.ChannelSecurityToken{
			ChannelID:       c.id,
			TokenID:         t.id,
			CreatedAt:       now,
			RevisedLifetime: uint32(life / time.Millisecond),
		},
		ServerNonce: nonce,
	}
	if err := c.appendOPN(o.reqID, &resp, o.asym); err != nil {
		c.s.mu.Unlock()
		return err
	}
	if binds {
		c.thumbprint = ea.thumb
	}
	return c.flushLocked()
}
