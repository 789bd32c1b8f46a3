package uaclient

import (
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/uasc"
)

// Security is what a signed or encrypted channel needs.
type Security struct {
	// Policy is an RSA policy; ECC, when set instead, an ECC one with the
	// ECKey of its curve.
	Policy *secpol.Policy
	ECC    *secpol.ECC
	ECKey  crypto.Signer
	Mode   ua.MessageSecurityMode
	// Certificate (DER) and Key are the client's; ApplicationURI must be
	// the certificate's URI.
	Certificate    []byte
	Key            *rsa.PrivateKey
	ApplicationURI string
	// ServerCertificate is the server's (DER), from its endpoints
	// (ServerCertificate fetches it).
	ServerCertificate []byte
}

func (s *Security) uri() string {
	if s.ECC != nil {
		return s.ECC.URI()
	}
	return s.Policy.URI()
}

// sign signs data with the client's key by the policy.
func (s *Security) sign(data []byte) (ua.SignatureData, error) {
	if s.ECC != nil {
		sig, err := s.ECC.Sign(s.ECKey, data)
		return ua.SignatureData{Algorithm: s.ECC.SignatureAlgorithm(), Signature: sig}, err
	}
	sig, err := s.Policy.Sign(s.Key, data)
	return ua.SignatureData{Algorithm: s.Policy.SignatureAlgorithm(), Signature: sig}, err
}

// symHdrLen is the offset of the sequence header in a MSG chunk.
const symHdrLen = OffSeq

// SetSecurity makes the handshake open a channel with s instead of
// SecurityPolicy None; call it before Handshake. Requests are then sealed
// and responses opened in NextChunk; StampChunk, which patches a chunk in
// place, is for None only: secure callers use AppendStamped.
func (c *Client) SetSecurity(s *Security) error {
	sc, err := x509.ParseCertificate(s.ServerCertificate)
	if err != nil {
		return fmt.Errorf("uaclient: server certificate: %w", err)
	}
	if s.ECC != nil {
		pub, ok := s.ECC.CheckKey(sc.PublicKey)
		if !ok {
			return errors.New("uaclient: the server certificate has no key of the policy's curve")
		}
		c.sec = s
		c.asym = uasc.ClientECCAsymmetric(s.ECC, s.ECKey, pub)
		return nil
	}
	pub, ok := sc.PublicKey.(*rsa.PublicKey)
	if !ok {
		return errors.New("uaclient: the server certificate has no RSA key")
	}
	c.sec = s
	c.asym = uasc.ClientAsymmetric(s.Policy, s.Key, pub)
	return nil
}

// AppendStamped appends a copy of a Template chunk with the next sequence
// number and the request id reqID, sealed when the channel is secure.
func (c *Client) AppendStamped(dst, tpl []byte, reqID uint32) []byte {
	start := len(dst)
	dst = append(dst, tpl...)
	c.StampChunk(dst[start:], reqID)
	if c.sym != nil {
		dst, _ = uasc.SealChunk(dst, start, symHdrLen, c.sym, &c.scratch)
	}
	return dst
}

// ServerCertificate asks the server at addr for its endpoints over
// SecurityPolicy None and returns the certificate of the endpoint with
// policy and mode.
func ServerCertificate(addr string, policy string, mode ua.MessageSecurityMode, timeout time.Duration) ([]byte, error) {
	c, err := dialChannel(addr, timeout)
	if err != nil {
		return nil, err
	}
	defer c.nc.Close()
	var resp ua.GetEndpointsResponse
	if err := c.Call(&ua.GetEndpointsRequest{RequestHeader: c.Header(), EndpointURL: c.url}, &resp); err != nil {
		return nil, err
	}
	for _, e := range resp.Endpoints {
		if e.SecurityPolicyURI == policy && e.SecurityMode == mode {
			return e.ServerCertificate, nil
		}
	}
	return nil, fmt.Errorf("uaclient: %s offers no endpoint %s %v", addr, policy, mode)
}
