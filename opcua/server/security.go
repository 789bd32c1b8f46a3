package server

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"slices"

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
	// ECCCredentials, when set, returns the server's certificate and key
	// of an ECC certificate type (secpol.ECC.CertificateType), nil when
	// it has none; asked at each handshake like Credentials.
	ECCCredentials func(certType string) *uasc.Credentials
	// ECCPolicies offered with ECCCredentials, each in Sign and
	// SignAndEncrypt (default secpol.AllECC).
	ECCPolicies []*secpol.ECC
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
// (OPC 10000-4 §7.14): encryption first, then the policy: rank is the
// policy's place among the ECC policies (secpol.AllECC), then the RSA
// ones (secpol.All), weakest first. The RSA policies rank above the ECC
// ones, as open62541 ranks them: a client that takes the highest level
// without knowing the ECC policies (most still do not) keeps working.
func securityLevel(rank int, mode ua.MessageSecurityMode) byte {
	level := byte(1 + rank)
	if mode == ua.MessageSecurityModeSignAndEncrypt {
		level += 10
	}
	return level
}

// eccCredentials returns the server's credentials of p's certificate
// type, or nil.
func (sec *Security) eccCredentials(p *secpol.ECC) *uasc.Credentials {
	if sec.ECCCredentials == nil {
		return nil
	}
	return sec.ECCCredentials(p.CertificateType())
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
	if sec.ECCCredentials != nil {
		if len(sec.ECCPolicies) == 0 {
			sec.ECCPolicies = secpol.AllECC
		}
		for _, p := range sec.ECCPolicies {
			pols = append(pols, uasc.NewECCPolicy(p, func() *uasc.Credentials { return sec.eccCredentials(p) },
				s.auditedCheck(sec.CheckCertificate, "SecureChannel/OpenSecureChannel")))
		}
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
				SecurityLevel:       securityLevel(len(secpol.AllECC)+slices.Index(secpol.All, p), mode),
			})
		}
		if sec.ECCCredentials == nil {
			continue
		}
		for _, p := range sec.ECCPolicies {
			c := sec.eccCredentials(p)
			if c == nil {
				continue
			}
			out = append(out, ua.EndpointDescription{
				EndpointURL:         s.cfg.EndpointURL,
				Server:              s.app,
				ServerCertificate:   c.Certificate,
				SecurityMode:        mode,
				SecurityPolicyURI:   p.URI(),
				UserIdentityTokens:  s.tokenPolicies(p.URI()),
				TransportProfileURI: TransportProfileUATCP,
				SecurityLevel:       securityLevel(slices.Index(secpol.AllECC, p), mode),
			})
		}
	}
	return out
}

// chanSec is what a session service needs of its channel's security:
// the policy (RSA or ECC), our credentials of its certificate type and
// the client's certificate.
type chanSec struct {
	rsa  *secpol.Policy
	ecc  *secpol.ECC
	own  *uasc.Credentials
	peer *x509.Certificate
	tp   []byte // the ChannelThumbprint of an enhanced ECC policy
}

// enhanced reports whether the channel's session signatures are bound to
// it (SecureChannelEnhancements, OPC 10000-4 v1.05.07 §5.7.2/§5.7.3).
func (cs chanSec) enhanced() bool { return cs.ecc != nil && cs.ecc.Enhanced() }

// boundData is the data of a channel-bound session signature: the
// ChannelThumbprint, first, the hashes of certs (each's leaf), last.
func (cs chanSec) boundData(first []byte, certs [][]byte, last []byte) []byte {
	out := append(bytes.Clone(cs.tp), first...)
	for _, c := range certs {
		out = append(out, cs.ecc.HashCertificate(c)...)
	}
	return append(out, last...)
}

func (cs chanSec) secure() bool { return cs.rsa != nil || cs.ecc != nil }

// sign signs data with our key by the channel's policy.
func (cs chanSec) sign(data []byte) (ua.SignatureData, error) {
	if cs.ecc != nil {
		if cs.own.EC == nil {
			return ua.SignatureData{}, status.BadSecurityChecksFailed
		}
		sig, err := cs.ecc.Sign(cs.own.EC, data)
		alg := cs.ecc.SignatureAlgorithm()
		if cs.enhanced() {
			alg = "" // the enhanced policies' SignatureData names none
		}
		return ua.SignatureData{Algorithm: alg, Signature: sig}, err
	}
	if cs.own.Key == nil {
		return ua.SignatureData{}, status.BadSecurityChecksFailed
	}
	sig, err := cs.rsa.Sign(cs.own.Key, data)
	return ua.SignatureData{Algorithm: cs.rsa.SignatureAlgorithm(), Signature: sig}, err
}

// verify checks the client's signature over data with its certificate's
// key by the channel's policy. Over ECC an empty algorithm is taken too:
// clients of the ECC policies send the SignatureData's algorithm empty
// (the policy names it).
func (cs chanSec) verify(sd ua.SignatureData, data []byte) error {
	if cs.ecc != nil {
		pub, ok := cs.ecc.CheckKey(cs.peer.PublicKey)
		if !ok || (!cs.enhanced() && sd.Algorithm != "" && sd.Algorithm != cs.ecc.SignatureAlgorithm()) {
			return secpol.ErrSecurityChecks
		}
		return cs.ecc.Verify(pub, data, sd.Signature)
	}
	pub, ok := cs.peer.PublicKey.(*rsa.PublicKey)
	if !ok || sd.Algorithm != cs.rsa.SignatureAlgorithm() {
		return secpol.ErrSecurityChecks
	}
	return cs.rsa.Verify(pub, data, sd.Signature)
}

// channelSecurity returns the channel's security; its policies are nil
// under SecurityPolicy None.
func (c *conn) channelSecurity() chanSec {
	sec := c.srv.cfg.Security
	uri := c.ch.SecurityPolicyURI()
	var cs chanSec
	if sec == nil {
		return cs
	}
	if cs.rsa = secpol.ByURI(uri); cs.rsa != nil {
		cs.own = sec.Credentials()
	} else if cs.ecc = secpol.ECCByURI(uri); cs.ecc != nil {
		cs.own = sec.eccCredentials(cs.ecc)
	} else {
		return chanSec{}
	}
	peer, err := x509.ParseCertificate(c.ch.PeerCertificate())
	if err != nil {
		return chanSec{}
	}
	cs.peer = peer
	if cs.enhanced() {
		if cs.tp = c.ch.ChannelThumbprint(); len(cs.tp) == 0 {
			return chanSec{}
		}
	}
	return cs
}

// checkCreateSecurity checks the security of a CreateSession over a
// secure channel (OPC 10000-4 §5.7.2): the client certificate is the
// channel's (Bad_SecurityChecksFailed), its URI is the ApplicationUri
// (Bad_CertificateUriInvalid), the nonce has 32 to 128 bytes
// (Bad_NonceInvalid). It
// returns the server signature over client certificate and nonce.
//
// Under an enhanced ECC policy the signature is bound to the channel:
// over ChannelThumbprint‖ClientNonce‖H(server certificate)‖H(client
// certificate)‖serverNonce (OPC 10000-4 v1.05.07 §5.7.2).
func (c *conn) checkCreateSecurity(req *ua.CreateSessionRequest, serverNonce []byte) (ua.SignatureData, []byte, error) {
	sec := c.srv.cfg.Security
	cs := c.channelSecurity()
	if !cs.secure() {
		if sec != nil && !sec.AllowInsecure {
			return ua.SignatureData{}, nil, status.BadSecurityPolicyRejected
		}
		return ua.SignatureData{}, nil, nil
	}
	if cs.own == nil {
		return ua.SignatureData{}, nil, status.BadSecurityChecksFailed
	}
	leaf, _, err := secpol.LeafCertificate(req.ClientCertificate)
	if err != nil || !bytes.Equal(leaf.Raw, cs.peer.Raw) {
		// Not the certificate the channel was opened with (§5.7.2).
		return ua.SignatureData{}, nil, status.BadSecurityChecksFailed
	}
	if !certNamesURI(leaf, req.ClientDescription.ApplicationURI) {
		return ua.SignatureData{}, nil, status.BadCertificateURIInvalid
	}
	if len(req.ClientNonce) < secpol.NonceLength || len(req.ClientNonce) > 128 {
		return ua.SignatureData{}, nil, status.BadNonceInvalid
	}
	data := append(append([]byte(nil), req.ClientCertificate...), req.ClientNonce...)
	if cs.enhanced() {
		data = cs.boundData(req.ClientNonce, [][]byte{cs.own.Certificate, cs.peer.Raw}, serverNonce)
	}
	sd, err := cs.sign(data)
	if err != nil {
		return ua.SignatureData{}, nil, status.BadInternalError
	}
	return sd, cs.own.Certificate, nil
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
	cs := c.channelSecurity()
	s.mu.Lock()
	nonce, clientCert, clientNonce := s.nonce, s.clientCert, s.clientNonce
	s.mu.Unlock()
	if !cs.secure() {
		if clientCert != nil {
			// The session was created over a secure channel; a None
			// channel cannot take it over.
			return status.BadSecurityChecksFailed
		}
		return nil
	}
	if cs.own == nil || !bytes.Equal(cs.peer.Raw, clientCert) {
		return status.BadSecurityChecksFailed
	}
	data := append(append([]byte(nil), cs.own.Certificate...), nonce...)
	if cs.enhanced() {
		// Bound to the channel (OPC 10000-4 v1.05.07 §5.7.3):
		// ChannelThumbprint‖server nonce‖H(server application
		// certificate)‖H(server channel certificate)‖H(client channel
		// certificate)‖ClientNonce; the two server certificates are
		// the one.
		data = cs.boundData(nonce, [][]byte{cs.own.Certificate, cs.own.Certificate, cs.peer.Raw}, clientNonce)
	}
	if cs.verify(req.ClientSignature, data) != nil {
		return status.BadApplicationSignatureInvalid
	}
	return nil
}
