package server

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

// Security configures the secure endpoints.
type Security struct {
	// Credentials returns the server's application instance certificate
	// and key; it is asked at each handshake, so a renewed certificate
	// is used from the next one on.
	Credentials func() *uasc.Credentials
	// CheckCertificate validates a client's certificate at each
	// OpenSecureChannel (pki.Store.Verify).
	CheckCertificate uasc.CertificateCheck
	// Policies offered, each in Sign and SignAndEncrypt (default
	// secpol.All).
	Policies []*secpol.Policy
	// AllowInsecure offers SecurityPolicy None for sessions too. Without
	// it a None channel serves discovery only (FindServers,
	// GetEndpoints), as OPC 10000-4 §5.4 requires, and CreateSession over
	// it is Bad_SecurityPolicyRejected.
	AllowInsecure bool
	// UserNames offers user-name tokens, whose password the server
	// decrypts and the Authenticator checks.
	UserNames bool
	// NoAnonymous withholds the anonymous token policy.
	NoAnonymous bool
	// CheckUserCertificate, when set, offers X.509 user tokens and
	// validates their certificates (a user trust list of their own); the
	// Authenticator then decides who the certificate's holder is.
	CheckUserCertificate uasc.CertificateCheck
	// TrustStore, when set, is managed over OPC UA through
	// Server/ServerConfiguration (OPC 10000-12 push model), by sessions
	// with the SecurityAdmin role over SignAndEncrypt only.
	TrustStore TrustStore
	// UserTrustStore, when set with TrustStore, is the trust list of
	// X.509 user certificates (CheckUserCertificate's), managed the same
	// way through the DefaultUserTokenGroup.
	UserTrustStore TrustLists
}

// securityLevel ranks an endpoint for clients that pick the best one
// (OPC 10000-4 §7.14): encryption first, then the policy's strength.
func securityLevel(p *secpol.Policy, mode ua.MessageSecurityMode) byte {
	level := byte(1)
	for i, q := range secpol.All {
		if q == p {
			level += byte(i)
		}
	}
	if mode == ua.MessageSecurityModeSignAndEncrypt {
		level += 10
	}
	return level
}

// setupSecurity adds the secure policies to the channel configuration.
func (s *Server) setupSecurity() {
	sec := s.cfg.Security
	if sec == nil {
		return
	}
	if len(sec.Policies) == 0 {
		sec.Policies = secpol.All
	}
	pols := []uasc.SecurityPolicy{uasc.PolicyNone}
	for _, p := range sec.Policies {
		pols = append(pols, uasc.NewSecurityPolicy(p, sec.Credentials, s.auditedCheck(sec.CheckCertificate, "SecureChannel/OpenSecureChannel")))
	}
	s.cfg.Channel.Policies = pols
}

// endpointList returns the endpoints offered, with the current server
// certificate.
func (s *Server) endpointList() []ua.EndpointDescription {
	sec := s.cfg.Security
	if sec == nil {
		return s.endpoints
	}
	var cert []byte
	if c := sec.Credentials(); c != nil {
		cert = c.Certificate
	}
	var out []ua.EndpointDescription
	if sec.AllowInsecure {
		for _, e := range s.endpoints {
			e.UserIdentityTokens = s.tokenPolicies(SecurityPolicyNone)
			out = append(out, e)
		}
	}
	for _, mode := range []ua.MessageSecurityMode{ua.MessageSecurityModeSign, ua.MessageSecurityModeSignAndEncrypt} {
		for _, p := range sec.Policies {
			out = append(out, ua.EndpointDescription{
				EndpointURL:         s.cfg.EndpointURL,
				Server:              s.app,
				ServerCertificate:   cert,
				SecurityMode:        mode,
				SecurityPolicyURI:   p.URI(),
				UserIdentityTokens:  s.tokenPolicies(p.URI()),
				TransportProfileURI: TransportProfileUATCP,
				SecurityLevel:       securityLevel(p, mode),
			})
		}
	}
	return out
}

// channelSecurity returns the channel's policy, our credentials and the
// client's certificate; nil policy under SecurityPolicy None.
func (c *conn) channelSecurity() (*secpol.Policy, *uasc.Credentials, *x509.Certificate) {
	p := secpol.ByURI(c.ch.SecurityPolicyURI())
	if p == nil || c.srv.cfg.Security == nil {
		return nil, nil, nil
	}
	peer, err := x509.ParseCertificate(c.ch.PeerCertificate())
	if err != nil {
		return nil, nil, nil
	}
	return p, c.srv.cfg.Security.Credentials(), peer
}

// checkCreateSecurity checks the security of a CreateSession over a
// secure channel (OPC 10000-4 §5.7.2): the client certificate is the
// channel's (Bad_SecurityChecksFailed), its URI is the ApplicationUri
// (Bad_CertificateUriInvalid), the nonce has 32 to 128 bytes
// (Bad_NonceInvalid). It
// returns the server signature over client certificate and nonce.
func (c *conn) checkCreateSecurity(req *ua.CreateSessionRequest) (ua.SignatureData, []byte, error) {
	sec := c.srv.cfg.Security
	p, own, peer := c.channelSecurity()
	if p == nil {
		if sec != nil && !sec.AllowInsecure {
			return ua.SignatureData{}, nil, status.BadSecurityPolicyRejected
		}
		return ua.SignatureData{}, nil, nil
	}
	if own == nil {
		return ua.SignatureData{}, nil, status.BadSecurityChecksFailed
	}
	leaf, _, err := secpol.LeafCertificate(req.ClientCertificate)
	if err != nil || !bytes.Equal(leaf.Raw, peer.Raw) {
		// Not the certificate the channel was opened with (§5.7.2).
		return ua.SignatureData{}, nil, status.BadSecurityChecksFailed
	}
	if !certNamesURI(leaf, req.ClientDescription.ApplicationURI) {
		return ua.SignatureData{}, nil, status.BadCertificateURIInvalid
	}
	if len(req.ClientNonce) < secpol.NonceLength || len(req.ClientNonce) > 128 {
		return ua.SignatureData{}, nil, status.BadNonceInvalid
	}
	sig, err := p.Sign(own.Key, append(append([]byte(nil), req.ClientCertificate...), req.ClientNonce...))
	if err != nil {
		return ua.SignatureData{}, nil, status.BadInternalError
	}
	return ua.SignatureData{Algorithm: p.SignatureAlgorithm(), Signature: sig}, own.Certificate, nil
}

func certNamesURI(c *x509.Certificate, uri string) bool {
	for _, u := range c.URIs {
		if u.String() == uri {
			return true
		}
	}
	return false
}

// checkActivateSecurity checks the client signature of an
// ActivateSession over a secure channel: our certificate and the last
// nonce we gave the session, signed with the key of the channel's client
// certificate (OPC 10000-4 §5.7.3), which must be the session's.
func (c *conn) checkActivateSecurity(s *session, req *ua.ActivateSessionRequest) error {
	p, own, peer := c.channelSecurity()
	s.mu.Lock()
	nonce, clientCert := s.nonce, s.clientCert
	s.mu.Unlock()
	if p == nil {
		if clientCert != nil {
			// The session was created over a secure channel; a None
			// channel cannot take it over.
			return status.BadSecurityChecksFailed
		}
		return nil
	}
	if own == nil || !bytes.Equal(peer.Raw, clientCert) {
		return status.BadSecurityChecksFailed
	}
	pub, ok := peer.PublicKey.(*rsa.PublicKey)
	if !ok || req.ClientSignature.Algorithm != p.SignatureAlgorithm() {
		return status.BadApplicationSignatureInvalid
	}
	data := append(append([]byte(nil), own.Certificate...), nonce...)
	if p.Verify(pub, data, req.ClientSignature.Signature) != nil {
		return status.BadApplicationSignatureInvalid
	}
	return nil
}
