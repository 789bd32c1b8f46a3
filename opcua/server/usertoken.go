package server

import (
	"crypto/subtle"
	"encoding/binary"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// UserNamePolicyID and CertificatePolicyID are the PolicyIds of the
// user-name and the X.509 user token policies.
const (
	UserNamePolicyID    = "username"
	CertificatePolicyID = "certificate"
)

// tokenPolicies are the user token policies of an endpoint with
// securityPolicy: anonymous when Config.Security allows it, and user
// names when an Authenticator takes them. Over SecurityPolicy None the
// password is encrypted with Basic256Sha256 (the token policy names it);
// over a secure channel with the channel's policy.
func (s *Server) tokenPolicies(securityPolicy string) []ua.UserTokenPolicy {
	var out []ua.UserTokenPolicy
	if s.cfg.Security == nil || !s.cfg.Security.NoAnonymous {
		out = append(out, ua.UserTokenPolicy{PolicyID: AnonymousPolicyID, TokenType: ua.UserTokenTypeAnonymous})
	}
	if s.cfg.Security != nil && s.cfg.Security.UserNames {
		p := ua.UserTokenPolicy{PolicyID: UserNamePolicyID, TokenType: ua.UserTokenTypeUserName}
		if securityPolicy == SecurityPolicyNone {
			p.SecurityPolicyURI = secpol.URIBasic256Sha256
		}
		out = append(out, p)
	}
	if s.cfg.Security != nil && s.cfg.Security.CheckUserCertificate != nil {
		p := ua.UserTokenPolicy{PolicyID: CertificatePolicyID, TokenType: ua.UserTokenTypeCertificate}
		if securityPolicy == SecurityPolicyNone {
			p.SecurityPolicyURI = secpol.URIBasic256Sha256
		}
		out = append(out, p)
	}
	return out
}

// checkX509Token checks an X.509 user token (OPC 10000-4 §7.36.5): the
// certificate is valid for the user trust list (CheckUserCertificate;
// Bad_IdentityTokenRejected), and sig is its key's signature over our
// certificate and the session's last nonce, by the token's security
// policy (Bad_UserSignatureInvalid).
func (c *conn) checkX509Token(s *session, tok *ua.X509IdentityToken, sig ua.SignatureData, nonce []byte) error {
	if tok.PolicyID != CertificatePolicyID || c.srv.cfg.Security.CheckUserCertificate == nil {
		return status.BadIdentityTokenInvalid
	}
	if secpol.ECCByURI(c.ch.SecurityPolicyURI()) != nil {
		return c.checkECCX509Token(s, tok, sig, nonce)
	}
	p := secpol.ByURI(c.ch.SecurityPolicyURI())
	if p == nil {
		p = secpol.Basic256Sha256
	}
	leaf, chain, err := secpol.LeafCertificate(tok.CertificateData)
	if err != nil {
		return status.BadIdentityTokenInvalid
	}
	pub, ok := p.CheckKey(leaf.PublicKey)
	if !ok {
		return status.BadIdentityTokenRejected
	}
	own := c.srv.cfg.Security.Credentials()
	if own == nil || sig.Algorithm != p.SignatureAlgorithm() {
		return status.BadUserSignatureInvalid
	}
	if p.Verify(pub, append(append([]byte(nil), own.Certificate...), nonce...), sig.Signature) != nil {
		return status.BadUserSignatureInvalid
	}
	if err := c.srv.auditedCheck(c.srv.cfg.Security.CheckUserCertificate, "Session/ActivateSession")(leaf, chain); err != nil {
		return status.BadIdentityTokenRejected
	}
	return nil
}

// checkECCX509Token is checkX509Token over an ECC channel: the user's
// certificate has a key of the channel's policy, and signed, by that
// policy, our certificate and the session's last nonce; under an
// enhanced policy the data bound to the channel: ChannelThumbprint‖
// nonce‖H(our certificate) twice‖H(the client's) twice‖ClientNonce (OPC
// 10000-4 v1.05.07 §5.7.3; application and channel certificates are the
// same here). The SignatureData's algorithm is not looked at: the
// policy names it, and clients fill it in differently.
func (c *conn) checkECCX509Token(s *session, tok *ua.X509IdentityToken, sig ua.SignatureData, nonce []byte) error {
	cs := c.channelSecurity()
	if cs.ecc == nil || cs.own == nil {
		return status.BadIdentityTokenInvalid
	}
	leaf, chain, err := secpol.LeafCertificate(tok.CertificateData)
	if err != nil {
		return status.BadIdentityTokenInvalid
	}
	pub, ok := cs.ecc.CheckKey(leaf.PublicKey)
	if !ok {
		return status.BadIdentityTokenRejected
	}
	data := append(append([]byte(nil), cs.own.Certificate...), nonce...)
	if cs.enhanced() {
		s.mu.Lock()
		clientNonce := s.clientNonce
		s.mu.Unlock()
		data = cs.boundData(nonce, [][]byte{cs.own.Certificate, cs.own.Certificate, cs.peer.Raw, cs.peer.Raw}, clientNonce)
	}
	if cs.ecc.Verify(pub, data, sig.Signature) != nil {
		return status.BadUserSignatureInvalid
	}
	if err := c.srv.auditedCheck(c.srv.cfg.Security.CheckUserCertificate, "Session/ActivateSession")(leaf, chain); err != nil {
		return status.BadIdentityTokenRejected
	}
	return nil
}

// decryptUserName returns tok with its password decrypted, for a session
// whose last nonce is nonce. The password is encrypted with our
// certificate by the token's security policy, in the legacy layout (OPC
// 10000-4 §7.36.2.2: length, secret, server nonce, zero padding allowed)
// or as an RsaEncryptedSecret (§7.36.2.4, EncryptionAlgorithm empty). A
// password that is not encrypted is accepted only over a SignAndEncrypt
// channel. Every failure is Bad_IdentityTokenInvalid.
func (c *conn) decryptUserName(s *session, tok *ua.UserNameIdentityToken, nonce []byte) (*ua.UserNameIdentityToken, error) {
	if tok.PolicyID != UserNamePolicyID {
		return nil, status.BadIdentityTokenInvalid
	}
	if tok.EncryptionAlgorithm == "" && secpol.IsEccEncryptedSecret(tok.Password) {
		// An ECC channel's password (OPC 10000-4 §7.40.2.5), sealed
		// for the ephemeral key the session gave last.
		secret, err := c.openEccSecret(s, tok.Password, nonce)
		if err != nil {
			return nil, err
		}
		return &ua.UserNameIdentityToken{PolicyID: tok.PolicyID, UserName: tok.UserName, Password: secret}, nil
	}
	// The token's policy: Basic256Sha256 over None, else the channel's.
	p := secpol.ByURI(c.ch.SecurityPolicyURI())
	if p == nil {
		p = secpol.Basic256Sha256
	}
	out := &ua.UserNameIdentityToken{PolicyID: tok.PolicyID, UserName: tok.UserName}
	own := c.srv.cfg.Security.Credentials()
	if tok.EncryptionAlgorithm == "" && own != nil && secpol.IsEncryptedSecret(tok.Password) {
		// The EncryptedSecret layout (§7.36.2.4): EncryptionAlgorithm
		// is empty, the secret names its policy.
		got, secret, err := p.OpenSecret(own.Key, own.Certificate, tok.Password)
		if err != nil || len(nonce) == 0 || subtle.ConstantTimeCompare(got, nonce) != 1 {
			return nil, status.BadIdentityTokenInvalid
		}
		out.Password = secret
		return out, nil
	}
	if tok.EncryptionAlgorithm == "" {
		if c.ch.SecurityMode() != ua.MessageSecurityModeSignAndEncrypt {
			return nil, status.BadIdentityTokenInvalid
		}
		out.Password = tok.Password
		return out, nil
	}
	if own == nil || tok.EncryptionAlgorithm != p.EncryptionAlgorithm() {
		return nil, status.BadIdentityTokenInvalid
	}
	buf := append([]byte(nil), tok.Password...)
	plain, err := p.Decrypt(own.Key, buf)
	if err != nil || len(plain) < 4 {
		return nil, status.BadIdentityTokenInvalid
	}
	n := binary.LittleEndian.Uint32(plain)
	rest := plain[4:]
	if uint64(n) > uint64(len(rest)) || int(n) < len(nonce) || len(nonce) == 0 {
		return nil, status.BadIdentityTokenInvalid
	}
	// A client may pad the plaintext to whole blocks; the padding must be
	// zeros (§7.36.2.2).
	var pad byte
	for _, b := range rest[n:] {
		pad |= b
	}
	if pad != 0 {
		return nil, status.BadIdentityTokenInvalid
	}
	rest = rest[:n]
	secret, tail := rest[:len(rest)-len(nonce)], rest[len(rest)-len(nonce):]
	if subtle.ConstantTimeCompare(tail, nonce) != 1 {
		return nil, status.BadIdentityTokenInvalid
	}
	out.Password = secret
	return out, nil
}
