package server

import (
	"bytes"
	"crypto/subtle"

	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// ecdhRequested returns the ECC policy whose EphemeralKey a CreateSession
// or ActivateSession request asks for: an AdditionalParametersType in its
// header with ECDHPolicyUri (OPC 10000-4 §7.1, §7.15), naming an ECC
// policy the server offers with a certificate; nil when there is none.
func (c *conn) ecdhRequested(h *ua.RequestHeader) *secpol.ECC {
	sec := c.srv.cfg.Security
	ap, ok := h.AdditionalHeader.Body.(*ua.AdditionalParametersType)
	if !ok || sec == nil || sec.ECCCredentials == nil {
		return nil
	}
	for _, kv := range ap.Parameters {
		if kv.Key.NamespaceIndex != 0 || kv.Key.Name != "ECDHPolicyUri" {
			continue
		}
		uri, _ := kv.Value.StringValue()
		for _, p := range sec.ECCPolicies {
			if p.URI() == uri && sec.eccCredentials(p) != nil {
				return p
			}
		}
	}
	return nil
}

// ephemeralKeyHeader makes a new ephemeral key of p for the session,
// which keeps it for the next EccEncryptedSecret (a password), and
// returns the response's AdditionalHeader with it: ECDHPolicyUri and
// ECDHKey, the public key signed with the server's certificate of p's
// type.
func (c *conn) ephemeralKeyHeader(s *session, p *secpol.ECC) (ua.ExtensionObject, error) {
	own := c.srv.cfg.Security.eccCredentials(p)
	if own == nil || own.EC == nil {
		return ua.ExtensionObject{}, status.BadSecurityChecksFailed
	}
	priv, pub, err := p.NewEphemeral()
	if err != nil {
		return ua.ExtensionObject{}, status.BadInternalError
	}
	sig, err := p.Sign(own.EC, pub)
	if err != nil {
		return ua.ExtensionObject{}, status.BadInternalError
	}
	s.mu.Lock()
	s.ecdhKey, s.ecdhPolicy = priv, p
	s.mu.Unlock()
	return ua.ExtensionObject{Body: &ua.AdditionalParametersType{Parameters: []ua.KeyValuePair{
		{Key: ua.QualifiedName{Name: "ECDHPolicyUri"}, Value: ua.MustVariant(p.URI())},
		{Key: ua.QualifiedName{Name: "ECDHKey"}, Value: ua.MustVariant(&ua.EphemeralKeyType{PublicKey: pub, Signature: sig})},
	}}}, nil
}

// openEccSecret returns the password of an EccEncryptedSecret sent over
// the channel's ECC policy: sealed for the session's ephemeral key (which
// it uses up), signed with the channel's client certificate, holding the
// session's last nonce. Every failure is Bad_IdentityTokenInvalid.
func (c *conn) openEccSecret(s *session, b, nonce []byte) ([]byte, error) {
	cs := c.channelSecurity()
	s.mu.Lock()
	key, p := s.ecdhKey, s.ecdhPolicy
	s.ecdhKey, s.ecdhPolicy = nil, nil // one secret per key
	s.mu.Unlock()
	if cs.ecc == nil || key == nil || p == nil || p.URI() != cs.ecc.URI() || len(nonce) == 0 {
		return nil, status.BadIdentityTokenInvalid
	}
	pub, ok := cs.ecc.CheckKey(cs.peer.PublicKey)
	if !ok {
		return nil, status.BadIdentityTokenInvalid
	}
	got, secret, err := p.OpenEccSecret(key, pub, b)
	if err != nil || subtle.ConstantTimeCompare(got, nonce) != 1 {
		return nil, status.BadIdentityTokenInvalid
	}
	return bytes.Clone(secret), nil
}
