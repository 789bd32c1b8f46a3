package server

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"github.com/edged/edged/opcua/server/internal/subtest"
	"testing"

	"github.com/edged/edged/internal/testutil/testkeys"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/secpol"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/opcua/uasc"
)

// passwords is an Authenticator that remembers the passwords it saw.
type passwords struct{ seen *[]string }

func (p passwords) Authenticate(token ua.Body) (Identity, error) {
	if t, ok := token.(*ua.UserNameIdentityToken); ok {
		*p.seen = append(*p.seen, string(t.Password))
		return Identity{UserName: t.UserName, Roles: RolesOf(RoleObserver)}, nil
	}
	return AnonymousOnly{}.Authenticate(token)
}

// TestUserNameTokenDecryption: over None (with --allow-insecure) the
// password comes encrypted with our certificate by Basic256Sha256, in the
// legacy layout (length, secret, server nonce) or as an
// RsaEncryptedSecret; the Authenticator sees the secret. A wrong nonce,
// length, algorithm, policy or ciphertext, or a password in clear over an
// unencrypted channel, is Bad_IdentityTokenInvalid.
func TestUserNameTokenDecryption(t *testing.T) {
	der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: DefaultApplicationURI, Key: testkeys.RSA(2048)})
	if err != nil {
		t.Fatal(err)
	}
	own, err := uasc.NewCredentials(der, key)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	s := newTestServer(t, Config{
		Authenticator: passwords{&seen},
		Security:      &Security{Credentials: func() *uasc.Credentials { return own }, AllowInsecure: true, UserNames: true},
	})
	cert, _ := x509.ParseCertificate(der)
	pub := cert.PublicKey.(*rsa.PublicKey)
	p := secpol.Basic256Sha256

	// The None endpoint's user-name policy names Basic256Sha256.
	eps := s.endpointList()
	var none *ua.EndpointDescription
	for i := range eps {
		if eps[i].SecurityPolicyURI == SecurityPolicyNone {
			none = &eps[i]
		}
	}
	if none == nil || len(none.UserIdentityTokens) != 2 || none.UserIdentityTokens[1].SecurityPolicyURI != secpol.URIBasic256Sha256 {
		t.Fatalf("None endpoint %+v", none)
	}

	encrypt := func(secret, nonce []byte, n int) []byte {
		plain := ua.AppendUint32(nil, uint32(n))
		plain = append(append(plain, secret...), nonce...)
		ct, err := p.Encrypt(nil, pub, plain)
		if err != nil {
			t.Fatal(err)
		}
		return ct
	}
	activate := func(tc *testConn, tok *ua.UserNameIdentityToken) ua.Body {
		return tc.call(&ua.ActivateSessionRequest{UserIdentityToken: ua.ExtensionObject{TypeID: tok.BinaryEncodingID(), Encoding: ua.ExtensionObjectBinary, Body: tok}})
	}
	session := func() (*testConn, []byte) {
		tc := newTestConn(t, s, 1)
		cs := subtest.WantOK[ua.CreateSessionResponse](t, tc.call(&ua.CreateSessionRequest{}))
		tc.token = cs.AuthenticationToken
		return tc, cs.ServerNonce
	}
	secret := []byte("pass word ü")

	tc, nonce := session()
	subtest.WantOK[ua.ActivateSessionResponse](t, activate(tc, &ua.UserNameIdentityToken{PolicyID: UserNamePolicyID, UserName: "alice",
		Password: encrypt(secret, nonce, len(secret)+len(nonce)), EncryptionAlgorithm: p.EncryptionAlgorithm()}))
	if len(seen) != 1 || seen[0] != string(secret) {
		t.Fatalf("the Authenticator saw %q", seen)
	}

	// Zero padding after the nonce, as open62541 adds it, is allowed;
	// anything else there is not.
	tc, nonce = session()
	padded := append(append(append(ua.AppendUint32(nil, uint32(len(secret)+len(nonce))), secret...), nonce...), 0, 0, 0)
	ct, _ := p.Encrypt(nil, pub, padded)
	subtest.WantOK[ua.ActivateSessionResponse](t, activate(tc, &ua.UserNameIdentityToken{PolicyID: UserNamePolicyID, UserName: "alice",
		Password: ct, EncryptionAlgorithm: p.EncryptionAlgorithm()}))
	if len(seen) != 2 || seen[1] != string(secret) {
		t.Fatalf("the Authenticator saw %q", seen)
	}
	seen = seen[:1]
	tc, nonce = session()
	padded = append(append(append(ua.AppendUint32(nil, uint32(len(secret)+len(nonce))), secret...), nonce...), 0, 1)
	ct, _ = p.Encrypt(nil, pub, padded)
	if got := subtest.FaultOf(activate(tc, &ua.UserNameIdentityToken{PolicyID: UserNamePolicyID, Password: ct, EncryptionAlgorithm: p.EncryptionAlgorithm()})); got != status.BadIdentityTokenInvalid {
		t.Errorf("non-zero padding: %v", got)
	}

	// The EncryptedSecret layout (§7.36.2.4), which a password over 64
	// bytes must use: EncryptionAlgorithm empty.
	long := bytes.Repeat([]byte("long pass phrase "), 6)
	sealed := func(p *secpol.Policy, nonce []byte) []byte {
		b, err := p.SealSecret(der, pub, nonce, long, 0)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tc, nonce = session()
	subtest.WantOK[ua.ActivateSessionResponse](t, activate(tc, &ua.UserNameIdentityToken{PolicyID: UserNamePolicyID, UserName: "alice", Password: sealed(p, nonce)}))
	if len(seen) != 2 || seen[1] != string(long) {
		t.Fatalf("the Authenticator saw %q", seen)
	}
	seen = seen[:1]

	other := bytes.Repeat([]byte{7}, 32)
	for name, tok := range map[string]func(nonce []byte) *ua.UserNameIdentityToken{
		"EncryptedSecret with another nonce": func(nonce []byte) *ua.UserNameIdentityToken {
			return &ua.UserNameIdentityToken{PolicyID: UserNamePolicyID, Password: sealed(p, other)}
		},
		"EncryptedSecret of another policy": func(nonce []byte) *ua.UserNameIdentityToken {
			return &ua.UserNameIdentityToken{PolicyID: UserNamePolicyID, Password: sealed(secpol.Aes256Sha256RsaPss, nonce)}
		},
		"EncryptedSecret damaged": func(nonce []byte) *ua.UserNameIdentityToken {
			b := sealed(p, nonce)
			b[len(b)-40] ^= 1
			return &ua.UserNameIdentityToken{PolicyID: UserNamePolicyID, Password: b}
		},
		"another nonce": func(nonce []byte) *ua.UserNameIdentityToken {
			return &ua.UserNameIdentityToken{PolicyID: UserNamePolicyID, Password: encrypt(secret, other, len(secret)+32), EncryptionAlgorithm: p.EncryptionAlgorithm()}
		},
		"wrong length": func(nonce []byte) *ua.UserNameIdentityToken {
			return &ua.UserNameIdentityToken{PolicyID: UserNamePolicyID, Password: encrypt(secret, nonce, 3), EncryptionAlgorithm: p.EncryptionAlgorithm()}
		},
		"wrong algorithm": func(nonce []byte) *ua.UserNameIdentityToken {
			return &ua.UserNameIdentityToken{PolicyID: UserNamePolicyID, Password: encrypt(secret, nonce, len(secret)+len(nonce)), EncryptionAlgorithm: secpol.AlgRsaOaepSha256}
		},
		"garbage": func(nonce []byte) *ua.UserNameIdentityToken {
			return &ua.UserNameIdentityToken{PolicyID: UserNamePolicyID, Password: bytes.Repeat([]byte{1}, 256), EncryptionAlgorithm: p.EncryptionAlgorithm()}
		},
		"in clear over None": func(nonce []byte) *ua.UserNameIdentityToken {
			return &ua.UserNameIdentityToken{PolicyID: UserNamePolicyID, Password: secret}
		},
		"unknown policy id": func(nonce []byte) *ua.UserNameIdentityToken {
			return &ua.UserNameIdentityToken{PolicyID: "other", Password: encrypt(secret, nonce, len(secret)+len(nonce)), EncryptionAlgorithm: p.EncryptionAlgorithm()}
		},
	} {
		tc, nonce := session()
		if got := subtest.FaultOf(activate(tc, tok(nonce))); got != status.BadIdentityTokenInvalid {
			t.Errorf("%s: %v, want Bad_IdentityTokenInvalid", name, got)
		}
	}
	if len(seen) != 1 {
		t.Fatalf("a bad token reached the Authenticator: %q", seen)
	}
}

// TestX509UserToken: an X.509 user token is accepted when its certificate
// passes CheckUserCertificate and its signature over our certificate and
// the session's nonce verifies; a signature over anything else is
// Bad_UserSignatureInvalid, an untrusted certificate
// Bad_IdentityTokenRejected.
func TestX509UserToken(t *testing.T) {
	der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: DefaultApplicationURI, Key: testkeys.RSA(2048)})
	if err != nil {
		t.Fatal(err)
	}
	own, _ := uasc.NewCredentials(der, key)
	userDER, userKey, err := pki.NewCertificate(pki.Template{CommonName: "alice", Key: testkeys.RSA(3072)})
	if err != nil {
		t.Fatal(err)
	}
	trusted := true
	s := newTestServer(t, Config{
		Authenticator: namedX509{},
		Security: &Security{Credentials: func() *uasc.Credentials { return own }, AllowInsecure: true,
			CheckUserCertificate: func(*x509.Certificate, []*x509.Certificate) error {
				if !trusted {
					return status.BadCertificateUntrusted
				}
				return nil
			}},
	})
	p := secpol.Basic256Sha256
	activate := func(signed []byte) ua.Body {
		tc := newTestConn(t, s, 1)
		cs := subtest.WantOK[ua.CreateSessionResponse](t, tc.call(&ua.CreateSessionRequest{}))
		tc.token = cs.AuthenticationToken
		if signed == nil {
			signed = append(append([]byte(nil), der...), cs.ServerNonce...)
		}
		sig, err := p.Sign(userKey, signed)
		if err != nil {
			t.Fatal(err)
		}
		tok := &ua.X509IdentityToken{PolicyID: CertificatePolicyID, CertificateData: userDER}
		return tc.call(&ua.ActivateSessionRequest{
			UserIdentityToken:  ua.ExtensionObject{TypeID: tok.BinaryEncodingID(), Encoding: ua.ExtensionObjectBinary, Body: tok},
			UserTokenSignature: ua.SignatureData{Algorithm: p.SignatureAlgorithm(), Signature: sig},
		})
	}
	subtest.WantOK[ua.ActivateSessionResponse](t, activate(nil))
	if got := subtest.FaultOf(activate([]byte("something else"))); got != status.BadUserSignatureInvalid {
		t.Errorf("a signature over something else: %v, want Bad_UserSignatureInvalid", got)
	}
	trusted = false
	if got := subtest.FaultOf(activate(nil)); got != status.BadIdentityTokenRejected {
		t.Errorf("an untrusted certificate: %v, want Bad_IdentityTokenRejected", got)
	}
}

// namedX509 accepts X.509 tokens (after the server's checks) as Observers.
type namedX509 struct{}

func (namedX509) Authenticate(token ua.Body) (Identity, error) {
	if _, ok := token.(*ua.X509IdentityToken); ok {
		return Identity{UserName: "x509", Roles: RolesOf(RoleObserver)}, nil
	}
	return AnonymousOnly{}.Authenticate(token)
}

// TestSecureSessionChecks: over a secure channel CreateSession wants the
// channel's certificate with the ApplicationUri it names and a nonce of
// 32 to 128 bytes, and signs certificate and nonce; ActivateSession wants
// the client's signature over our certificate and the last nonce, and a
// session moves only to a channel opened with the same certificate.
func TestSecureSessionChecks(t *testing.T) {
	der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: DefaultApplicationURI, Key: testkeys.RSA(2048)})
	if err != nil {
		t.Fatal(err)
	}
	own, _ := uasc.NewCredentials(der, key)
	s := newTestServer(t, Config{Security: &Security{Credentials: func() *uasc.Credentials { return own }}})
	p := secpol.Aes256Sha256RsaPss
	const uri = "urn:client"
	certA, keyA, _ := pki.NewCertificate(pki.Template{ApplicationURI: uri, Key: testkeys.RSA(3072)})
	certB, _, _ := pki.NewCertificate(pki.Template{ApplicationURI: uri, Key: testkeys.RSA(4096)})
	conn := func(id uint32, peer []byte) *testConn {
		tc := newTestConn(t, s, id)
		fc := tc.c.ch.(*fakeChannel)
		fc.policy, fc.mode, fc.peer = p.URI(), ua.MessageSecurityModeSignAndEncrypt, peer
		return tc
	}
	nonce := bytes.Repeat([]byte{3}, 32)
	create := func(tc *testConn, cert []byte, appURI string, n []byte) ua.Body {
		return tc.call(&ua.CreateSessionRequest{ClientDescription: ua.ApplicationDescription{ApplicationURI: appURI}, ClientCertificate: cert, ClientNonce: n})
	}
	tc := conn(1, certA)
	for name, c := range map[string]struct {
		cert  []byte
		uri   string
		nonce []byte
		want  ua.StatusCode
	}{
		"another certificate": {certB, uri, nonce, status.BadSecurityChecksFailed},
		"another URI":         {certA, "urn:other", nonce, status.BadCertificateURIInvalid},
		"short nonce":         {certA, uri, nonce[:31], status.BadNonceInvalid},
		"long nonce":          {certA, uri, bytes.Repeat([]byte{3}, 129), status.BadNonceInvalid},
	} {
		if got := subtest.FaultOf(create(tc, c.cert, c.uri, c.nonce)); got != c.want {
			t.Errorf("CreateSession with %s: %v, want %v", name, got, c.want)
		}
	}
	cs := subtest.WantOK[ua.CreateSessionResponse](t, create(tc, certA, uri, nonce))
	caCert, _ := x509.ParseCertificate(der)
	if !bytes.Equal(cs.ServerCertificate, der) || cs.ServerSignature.Algorithm != p.SignatureAlgorithm() ||
		p.Verify(caCert.PublicKey.(*rsa.PublicKey), append(append([]byte(nil), certA...), nonce...), cs.ServerSignature.Signature) != nil {
		t.Fatal("the server signature does not verify over the client certificate and nonce")
	}
	tc.token = cs.AuthenticationToken
	activate := func(tc *testConn, serverNonce []byte, signer *rsa.PrivateKey) ua.Body {
		sig, _ := p.Sign(signer, append(append([]byte(nil), der...), serverNonce...))
		return tc.call(&ua.ActivateSessionRequest{ClientSignature: ua.SignatureData{Algorithm: p.SignatureAlgorithm(), Signature: sig}})
	}
	if got := subtest.FaultOf(activate(tc, []byte("an old nonce"), keyA)); got != status.BadApplicationSignatureInvalid {
		t.Errorf("a signature over another nonce: %v", got)
	}
	as := subtest.WantOK[ua.ActivateSessionResponse](t, activate(tc, cs.ServerNonce, keyA))
	// Another channel with another certificate cannot take the session.
	other := conn(2, certB)
	other.token = cs.AuthenticationToken
	if got := subtest.FaultOf(activate(other, as.ServerNonce, keyA)); got != status.BadSecurityChecksFailed {
		t.Errorf("a channel with another certificate: %v, want Bad_SecurityChecksFailed", got)
	}
	// Nor a channel without security.
	plain := newTestConn(t, s, 3)
	plain.token = cs.AuthenticationToken
	if got := subtest.FaultOf(activate(plain, as.ServerNonce, keyA)); got != status.BadSecurityChecksFailed {
		t.Errorf("a None channel: %v, want Bad_SecurityChecksFailed", got)
	}
	// A channel with the same certificate can.
	same := conn(4, certA)
	same.token = cs.AuthenticationToken
	subtest.WantOK[ua.ActivateSessionResponse](t, activate(same, as.ServerNonce, keyA))
}

// TestEccEncryptedSecretToken: over an ECC channel (ECC_nistP256, Sign) a
// client that asks for an EphemeralKey in CreateSession's header
// (ECDHPolicyUri) gets one, signed with the server's certificate of the
// curve; a password sealed for it as an EccEncryptedSecret logs in. The
// key serves one password: sealed for it again, or with another nonce,
// or in the clear over Sign, the token is Bad_IdentityTokenInvalid.
func TestEccEncryptedSecretToken(t *testing.T) {
	p := secpol.EccNistP256
	srvDER, srvKey, err := pki.NewECCertificate(pki.Template{ApplicationURI: DefaultApplicationURI}, p.Curve())
	if err != nil {
		t.Fatal(err)
	}
	own, err := uasc.NewECCredentials(srvDER, srvKey)
	if err != nil {
		t.Fatal(err)
	}
	rsaDER, rsaKey, _ := pki.NewCertificate(pki.Template{ApplicationURI: DefaultApplicationURI, Key: testkeys.RSA(2048)})
	rsaOwn, _ := uasc.NewCredentials(rsaDER, rsaKey)
	var seen []string
	s := newTestServer(t, Config{
		Authenticator: passwords{&seen},
		Security: &Security{Credentials: func() *uasc.Credentials { return rsaOwn }, UserNames: true,
			ECCCredentials: func(string) *uasc.Credentials { return own }},
	})
	const uri = "urn:edged:test:ecc-client"
	cliDER, cliKey, err := pki.NewECCertificate(pki.Template{ApplicationURI: uri}, p.Curve())
	if err != nil {
		t.Fatal(err)
	}
	askKey := ua.ExtensionObject{Body: &ua.AdditionalParametersType{Parameters: []ua.KeyValuePair{
		{Key: ua.QualifiedName{Name: "ECDHPolicyUri"}, Value: ua.MustVariant(p.URI())}}}}
	// session opens one over an ECC Sign channel and returns the
	// server's nonce and ephemeral key.
	session := func() (*testConn, []byte, []byte) {
		tc := newTestConn(t, s, 1)
		fc := tc.c.ch.(*fakeChannel)
		fc.policy, fc.mode, fc.peer = p.URI(), ua.MessageSecurityModeSign, cliDER
		cs := subtest.WantOK[ua.CreateSessionResponse](t, tc.call(&ua.CreateSessionRequest{
			RequestHeader:     ua.RequestHeader{AdditionalHeader: askKey},
			ClientDescription: ua.ApplicationDescription{ApplicationURI: uri},
			ClientCertificate: cliDER, ClientNonce: bytes.Repeat([]byte{5}, 32)}))
		tc.token = cs.AuthenticationToken
		ap, ok := cs.ResponseHeader.AdditionalHeader.Body.(*ua.AdditionalParametersType)
		if !ok {
			t.Fatalf("no AdditionalParametersType in the response header: %+v", cs.ResponseHeader.AdditionalHeader)
		}
		var key *ua.EphemeralKeyType
		for _, kv := range ap.Parameters {
			if kv.Key.Name == "ECDHKey" {
				if eo, ok := kv.Value.Value().(ua.ExtensionObject); ok {
					key, _ = eo.Body.(*ua.EphemeralKeyType)
				}
			}
		}
		if key == nil || len(key.PublicKey) != p.NonceLength() || p.Verify(&srvKey.(*ecdsa.PrivateKey).PublicKey, key.PublicKey, key.Signature) != nil {
			t.Fatalf("ECDHKey %+v: missing, or not signed with the server's certificate", key)
		}
		return tc, cs.ServerNonce, key.PublicKey
	}
	activate := func(tc *testConn, nonce []byte, password []byte) ua.Body {
		sig, err := p.Sign(cliKey, append(bytes.Clone(srvDER), nonce...))
		if err != nil {
			t.Fatal(err)
		}
		tok := &ua.UserNameIdentityToken{PolicyID: UserNamePolicyID, UserName: "alice", Password: password}
		return tc.call(&ua.ActivateSessionRequest{ClientSignature: ua.SignatureData{Signature: sig},
			UserIdentityToken: ua.ExtensionObject{TypeID: tok.BinaryEncodingID(), Encoding: ua.ExtensionObjectBinary, Body: tok}})
	}
	seal := func(eph, nonce []byte) []byte {
		b, err := p.SealEccSecret(cliDER, cliKey, eph, nonce, []byte("ecc pass"), 0)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	tc, nonce, eph := session()
	ar := subtest.WantOK[ua.ActivateSessionResponse](t, activate(tc, nonce, seal(eph, nonce)))
	if len(seen) != 1 || seen[0] != "ecc pass" {
		t.Fatalf("the Authenticator saw %q", seen)
	}
	// The same key again (the session's second activation, which asked
	// for no new one): used up.
	nonce = ar.ServerNonce
	if got := subtest.FaultOf(activate(tc, nonce, seal(eph, nonce))); got != status.BadIdentityTokenInvalid {
		t.Errorf("a second secret for a used ephemeral key: %v, want Bad_IdentityTokenInvalid", got)
	}
	tc, nonce, eph = session()
	if got := subtest.FaultOf(activate(tc, nonce, seal(eph, bytes.Repeat([]byte{9}, 32)))); got != status.BadIdentityTokenInvalid {
		t.Errorf("a secret with another nonce: %v, want Bad_IdentityTokenInvalid", got)
	}
	tc, nonce, _ = session()
	if got := subtest.FaultOf(activate(tc, nonce, []byte("ecc pass"))); got != status.BadIdentityTokenInvalid {
		t.Errorf("a password in the clear over Sign: %v, want Bad_IdentityTokenInvalid", got)
	}
	if len(seen) != 1 {
		t.Fatalf("a bad token reached the Authenticator: %q", seen)
	}
}

// TestECCX509UserToken: over an ECC channel (ECC_nistP256, Sign) an X.509
// user token with a P-256 certificate, signed over our certificate and
// the session's nonce with its key, is accepted when the user trust list
// takes it; another signature is Bad_UserSignatureInvalid, a P-384 or an
// untrusted certificate Bad_IdentityTokenRejected.
func TestECCX509UserToken(t *testing.T) {
	p := secpol.EccNistP256
	srvDER, srvKey, _ := pki.NewECCertificate(pki.Template{ApplicationURI: DefaultApplicationURI}, p.Curve())
	own, _ := uasc.NewECCredentials(srvDER, srvKey)
	rsaDER, rsaKey, _ := pki.NewCertificate(pki.Template{ApplicationURI: DefaultApplicationURI, Key: testkeys.RSA(2048)})
	rsaOwn, _ := uasc.NewCredentials(rsaDER, rsaKey)
	userDER, userKey, _ := pki.NewECCertificate(pki.Template{CommonName: "alice"}, p.Curve())
	strangerDER, strangerKey, _ := pki.NewECCertificate(pki.Template{CommonName: "mallory"}, p.Curve())
	p384DER, p384Key, _ := pki.NewECCertificate(pki.Template{CommonName: "alice"}, secpol.EccNistP384.Curve())
	s := newTestServer(t, Config{
		Authenticator: namedX509{},
		Security: &Security{Credentials: func() *uasc.Credentials { return rsaOwn },
			ECCCredentials: func(string) *uasc.Credentials { return own },
			CheckUserCertificate: func(leaf *x509.Certificate, _ []*x509.Certificate) error {
				if bytes.Equal(leaf.Raw, strangerDER) {
					return status.BadCertificateUntrusted
				}
				return nil
			}},
	})
	const uri = "urn:edged:test:ecc-client"
	cliDER, cliKey, _ := pki.NewECCertificate(pki.Template{ApplicationURI: uri}, p.Curve())
	try := func(cert []byte, signer crypto.Signer, sp *secpol.ECC, tamper bool) ua.Body {
		tc := newTestConn(t, s, 1)
		fc := tc.c.ch.(*fakeChannel)
		fc.policy, fc.mode, fc.peer = p.URI(), ua.MessageSecurityModeSign, cliDER
		cs := subtest.WantOK[ua.CreateSessionResponse](t, tc.call(&ua.CreateSessionRequest{
			ClientDescription: ua.ApplicationDescription{ApplicationURI: uri},
			ClientCertificate: cliDER, ClientNonce: bytes.Repeat([]byte{5}, 32)}))
		tc.token = cs.AuthenticationToken
		appSig, _ := p.Sign(cliKey, append(bytes.Clone(srvDER), cs.ServerNonce...))
		data := append(bytes.Clone(srvDER), cs.ServerNonce...)
		if tamper {
			data[0] ^= 1
		}
		userSig, err := sp.Sign(signer, data)
		if err != nil {
			t.Fatal(err)
		}
		tok := &ua.X509IdentityToken{PolicyID: CertificatePolicyID, CertificateData: cert}
		return tc.call(&ua.ActivateSessionRequest{ClientSignature: ua.SignatureData{Signature: appSig},
			UserIdentityToken:  ua.ExtensionObject{TypeID: tok.BinaryEncodingID(), Encoding: ua.ExtensionObjectBinary, Body: tok},
			UserTokenSignature: ua.SignatureData{Signature: userSig}})
	}
	subtest.WantOK[ua.ActivateSessionResponse](t, try(userDER, userKey, p, false))
	for name, c := range map[string]struct {
		got  ua.Body
		want ua.StatusCode
	}{
		"another signature":        {try(userDER, userKey, p, true), status.BadUserSignatureInvalid},
		"a P-384 certificate":      {try(p384DER, p384Key, secpol.EccNistP384, false), status.BadIdentityTokenRejected},
		"an untrusted certificate": {try(strangerDER, strangerKey, p, false), status.BadIdentityTokenRejected},
	} {
		if got := subtest.FaultOf(c.got); got != c.want {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}
