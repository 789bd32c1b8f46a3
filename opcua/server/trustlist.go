package server

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"slices"
	"sync"
	"time"

	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// TrustLists are a certificate group's trust lists, managed remotely
// through its TrustList (OPC 10000-12 push model). Lists are DER,
// indexed by the bits of TrustListDataType's SpecifiedLists (trusted
// certificates, trusted CRLs, issuer certificates, issuer CRLs).
// pki.Store implements it.
type TrustLists interface {
	Lists() ([4][][]byte, error)
	Replace(masks uint32, lists [4][][]byte) error
	Add(der []byte, trusted bool) error
	Remove(thumbprint string, trusted bool) error
}

// TrustStore is what Server/ServerConfiguration manages of the
// application (DefaultApplicationGroup): its trust lists, its rejected
// certificates and its own certificate. pki.Store implements it.
type TrustStore interface {
	TrustLists
	Rejected() ([][]byte, error)
	// SigningRequest and UpdateCertificate act on the certificate of a
	// certificate type: "rsa", or an ECC one (secpol.ECC.CertificateType).
	SigningRequest(certType string, subject *pkix.Name, regenerate bool) ([]byte, error)
	UpdateCertificate(certType string, der []byte, issuers [][]byte, keyPEM []byte, applicationURI string) error
}

// MaxTrustListSize is ServerConfiguration/MaxTrustListSize: the largest
// encoded TrustListDataType a client may write.
const MaxTrustListSize = 1 << 20

// maxOpenFiles bounds the TrustList handles open at once.
const maxOpenFiles = 4

// trustFiles are the open handles of the TrustList and when the lists
// last changed.
type trustFiles struct {
	handles FileHandles
	mu      sync.Mutex
	updated time.Time // LastUpdateTime
}

func newTrustFiles() trustFiles {
	return trustFiles{handles: FileHandles{Max: maxOpenFiles, MaxSize: MaxTrustListSize, Exclusive: true}}
}

// trustGroup is a certificate group whose TrustList is managed
// remotely: the application's (DefaultApplicationGroup) or the X.509 user
// tokens' (DefaultUserTokenGroup).
type trustGroup int

const (
	appGroup trustGroup = iota
	userGroup
)

// trustListNodes are a group's TrustList methods, in the order of
// trustListHandlers.
var trustListNodes = [2][10]uint32{
	{
		id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Open,
		id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_OpenWithMasks,
		id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Close,
		id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Read,
		id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_Write,
		id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_GetPosition,
		id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_SetPosition,
		id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_CloseAndUpdate,
		id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_AddCertificate,
		id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup_TrustList_RemoveCertificate,
	},
	{
		id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_Open,
		id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_OpenWithMasks,
		id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_Close,
		id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_Read,
		id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_Write,
		id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_GetPosition,
		id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_SetPosition,
		id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_CloseAndUpdate,
		id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_AddCertificate,
		id.ServerConfiguration_CertificateGroups_DefaultUserTokenGroup_TrustList_RemoveCertificate,
	},
}

type methodFunc = func(context.Context, ua.NodeID, []ua.Variant) (ua.StatusCode, []ua.Variant)

// trustListMethods maps the methods to their handlers.
func (s *Server) trustListMethods() []struct {
	node uint32
	h    methodFunc
} {
	var ms []struct {
		node uint32
		h    methodFunc
	}
	for g := appGroup; g <= userGroup; g++ {
		for i, h := range s.trustListHandlers(g) {
			ms = append(ms, struct {
				node uint32
				h    methodFunc
			}{trustListNodes[g][i], h})
		}
	}
	for _, m := range []struct {
		node uint32
		h    methodFunc
	}{
		{id.ServerConfiguration_GetRejectedList, s.getRejectedList},
		{id.ServerConfiguration_CreateSigningRequest, s.createSigningRequest},
		{id.ServerConfiguration_UpdateCertificate, s.updateCertificate},
		{id.ServerConfiguration_ApplyChanges, s.applyChanges},
		{id.ServerConfiguration_CancelChanges, s.cancelChanges},
	} {
		ms = append(ms, m)
	}
	return ms
}

// trustListHandlers are group g's TrustList methods (trustListNodes).
// The table is also listed on a nil *Server (roles.go): the handles are
// looked up when a method runs.
func (s *Server) trustListHandlers(g trustGroup) [10]methodFunc {
	fh := func(f func(*FileHandles, context.Context, []ua.Variant) (ua.StatusCode, []ua.Variant)) methodFunc {
		return func(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
			if _, st := s.groupAdmin(ctx, g); st != status.Good {
				return st, nil
			}
			return f(&s.trustOf(g).handles, ctx, in)
		}
	}
	return [10]methodFunc{
		s.tlOpen(g), s.tlOpenWithMasks(g),
		fh(func(fh *FileHandles, ctx context.Context, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
			_, st := fh.Close(ctx, in)
			return st, nil
		}),
		fh((*FileHandles).Read), fh((*FileHandles).Write), fh((*FileHandles).GetPosition), fh((*FileHandles).SetPosition),
		s.tlCloseAndUpdate(g), s.tlAddCertificate(g), s.tlRemoveCertificate(g),
	}
}

// trustOf is group g's open handles and update time.
func (s *Server) trustOf(g trustGroup) *trustFiles {
	if g == userGroup {
		return &s.userTrust
	}
	return &s.trust
}

// groupAdmin returns group g's lists when the calling session may manage
// security (securityAdmin); Bad_NotSupported when the group has none.
func (s *Server) groupAdmin(ctx context.Context, g trustGroup) (TrustLists, ua.StatusCode) {
	ts, _, st := s.securityAdmin(ctx)
	if st != status.Good || g == appGroup {
		return ts, st
	}
	if s.cfg.Security.UserTrustStore == nil {
		return nil, status.BadNotSupported
	}
	return s.cfg.Security.UserTrustStore, status.Good
}

// securityAdmin returns the store and the calling session when the
// session may manage security: the SecurityAdmin role over a
// SignAndEncrypt channel. Anything else is Bad_UserAccessDenied, and
// Bad_NotSupported without a TrustStore.
func (s *Server) securityAdmin(ctx context.Context) (TrustStore, *session, ua.StatusCode) {
	sess := sessionFrom(ctx)
	if sess == nil || !Roles(sess.roles.Load()).Has(RoleSecurityAdmin) ||
		ua.MessageSecurityMode(sess.mode.Load()) != ua.MessageSecurityModeSignAndEncrypt {
		return nil, nil, status.BadUserAccessDenied
	}
	if s.cfg.Security == nil || s.cfg.Security.TrustStore == nil {
		return nil, nil, status.BadNotSupported
	}
	return s.cfg.Security.TrustStore, sess, status.Good
}

// encodedTrustList returns the lists of masks as an encoded
// TrustListDataType, the TrustList file's content.
func encodedTrustList(ts TrustLists, masks uint32) ([]byte, error) {
	lists, err := ts.Lists()
	if err != nil {
		return nil, err
	}
	tl := ua.TrustListDataType{SpecifiedLists: masks}
	for i, p := range []*[][]byte{&tl.TrustedCertificates, &tl.TrustedCrls, &tl.IssuerCertificates, &tl.IssuerCrls} {
		if masks&(1<<i) != 0 {
			*p = lists[i]
		}
	}
	return tl.Encode(nil), nil
}

// tlOpen opens the TrustList: to read it whole, or to replace it whole
// (write with EraseExisting; no append).
func (s *Server) tlOpen(g trustGroup) methodFunc {
	return func(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
		return s.tlOpenIn(ctx, g, in)
	}
}

func (s *Server) tlOpenIn(ctx context.Context, g trustGroup, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	ts, st := s.groupAdmin(ctx, g)
	if st != status.Good {
		return st, nil
	}
	mode, st := ParseFileMode(in, false, true)
	if st != status.Good {
		return st, nil
	}
	f := &FileHandle{Write: mode&FileWrite != 0}
	if !f.Write {
		b, err := encodedTrustList(ts, 15)
		if err != nil {
			return status.BadInternalError, nil
		}
		f.Data = b
	}
	h, st := s.trustOf(g).handles.Open(ctx, f)
	if st != status.Good {
		return st, nil
	}
	return status.Good, []ua.Variant{ua.MustVariant(h)}
}

func (s *Server) tlOpenWithMasks(g trustGroup) methodFunc {
	return func(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
		ts, st := s.groupAdmin(ctx, g)
		if st != status.Good {
			return st, nil
		}
		masks, _ := in[0].Uint32()
		b, err := encodedTrustList(ts, masks&15)
		if err != nil {
			return status.BadInternalError, nil
		}
		h, st := s.trustOf(g).handles.Open(ctx, &FileHandle{Data: b})
		if st != status.Good {
			return st, nil
		}
		return status.Good, []ua.Variant{ua.MustVariant(h)}
	}
}

// tlCloseAndUpdate decodes what the handle wrote as a TrustListDataType
// and replaces the lists it specifies. The new lists count from the next
// handshake on, so no ApplyChanges is required.
func (s *Server) tlCloseAndUpdate(g trustGroup) methodFunc {
	return func(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
		return s.tlCloseAndUpdateIn(ctx, g, in)
	}
}

func (s *Server) tlCloseAndUpdateIn(ctx context.Context, g trustGroup, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	ts, st := s.groupAdmin(ctx, g)
	if st != status.Good {
		return st, nil
	}
	f, st := s.trustOf(g).handles.Close(ctx, in)
	if st != status.Good {
		return st, nil
	}
	if !f.Write {
		return status.BadInvalidState, nil
	}
	var tl ua.TrustListDataType
	d := ua.NewDecoder(f.Data)
	d.Limits = ua.Limits{MaxStringLength: 1 << 10, MaxByteStringLength: MaxTrustListSize, MaxArrayLength: 1 << 12, MaxDepth: 4}
	tl.Decode(d)
	if d.Err() != nil || len(d.Rest()) != 0 {
		return status.BadDecodingError, nil
	}
	lists := [4][][]byte{tl.TrustedCertificates, tl.TrustedCrls, tl.IssuerCertificates, tl.IssuerCrls}
	if err := ts.Replace(tl.SpecifiedLists&15, lists); err != nil {
		return status.BadCertificateInvalid, nil
	}
	s.trustChanged(g)
	return status.Good, []ua.Variant{ua.MustVariant(false)}
}

func (s *Server) tlAddCertificate(g trustGroup) methodFunc {
	return func(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
		ts, st := s.groupAdmin(ctx, g)
		if st != status.Good {
			return st, nil
		}
		der, _ := in[0].ByteString()
		trusted, _ := in[1].Bool()
		if err := ts.Add(der, trusted); err != nil {
			return status.BadCertificateInvalid, nil
		}
		s.trustChanged(g)
		return status.Good, nil
	}
}

func (s *Server) tlRemoveCertificate(g trustGroup) methodFunc {
	return func(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
		ts, st := s.groupAdmin(ctx, g)
		if st != status.Good {
			return st, nil
		}
		thumb, _ := in[0].StringValue()
		trusted, _ := in[1].Bool()
		if ts.Remove(thumb, trusted) != nil {
			return status.BadInvalidArgument, nil // no such certificate in that list
		}
		s.trustChanged(g)
		return status.Good, nil
	}
}

func (s *Server) getRejectedList(ctx context.Context, _ ua.NodeID, _ []ua.Variant) (ua.StatusCode, []ua.Variant) {
	ts, _, st := s.securityAdmin(ctx)
	if st != status.Good {
		return st, nil
	}
	rej, err := ts.Rejected()
	if err != nil {
		return status.BadInternalError, nil
	}
	if rej == nil {
		rej = [][]byte{}
	}
	return status.Good, []ua.Variant{ua.MustVariant(rej)}
}

// applicationCertTypes are the CertificateTypes of the default
// application group: RSA-SHA256 and, with ECC credentials, one per ECC
// policy's curve; each maps to its certificate type's short name.
func (s *Server) applicationCertTypes() ([]ua.NodeID, []string) {
	ids := []ua.NodeID{ua.NewNumericNodeID(0, id.RsaSha256ApplicationCertificateType)}
	names := []string{"rsa"}
	if sec := s.cfg.Security; sec != nil && sec.ECCCredentials != nil {
		for _, p := range sec.ECCPolicies {
			var n uint32
			switch p.CertificateType() {
			case "nistP256":
				n = id.EccNistP256ApplicationCertificateType
			case "nistP384":
				n = id.EccNistP384ApplicationCertificateType
			case "curve25519":
				n = id.EccCurve25519ApplicationCertificateType
			default:
				continue
			}
			if !slices.Contains(names, p.CertificateType()) {
				ids, names = append(ids, ua.NewNumericNodeID(0, n)), append(names, p.CertificateType())
			}
		}
	}
	return ids, names
}

// checkGroup checks the CertificateGroupId and CertificateTypeId of
// CreateSigningRequest and UpdateCertificate: the default application
// group (or null) and one of its CertificateTypes (null: RSA-SHA256). It
// returns the certificate type's short name.
func (s *Server) checkGroup(in []ua.Variant) (string, ua.StatusCode) {
	group, _ := in[0].Value().(ua.NodeID)
	typ, _ := in[1].Value().(ua.NodeID)
	if !group.IsNull() && group != ua.NewNumericNodeID(0, id.ServerConfiguration_CertificateGroups_DefaultApplicationGroup) {
		return "", status.BadInvalidArgument
	}
	if typ.IsNull() {
		return "rsa", status.Good
	}
	ids, names := s.applicationCertTypes()
	if i := slices.Index(ids, typ); i >= 0 {
		return names[i], status.Good
	}
	return "", status.BadInvalidArgument
}

// createSigningRequest answers CreateSigningRequest(CertificateGroupId,
// CertificateTypeId, SubjectName, RegeneratePrivateKey, Nonce): a PKCS#10
// request with the current certificate's names and its subject, or
// SubjectName when given (pki.ParseSubjectName; Bad_InvalidArgument when
// it does not parse), for a new key when asked.
func (s *Server) createSigningRequest(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	ts, _, st := s.securityAdmin(ctx)
	if st != status.Good {
		return st, nil
	}
	certType, st := s.checkGroup(in)
	if st != status.Good {
		return st, nil
	}
	name, _ := in[2].StringValue()
	subject, err := pki.ParseSubjectName(name)
	if err != nil {
		return status.BadInvalidArgument, nil
	}
	regen, _ := in[3].Bool()
	csr, err := ts.SigningRequest(certType, subject, regen)
	if err != nil {
		return status.BadInternalError, nil
	}
	return status.Good, []ua.Variant{ua.MustVariant(csr)}
}

// updateCertificate answers UpdateCertificate(CertificateGroupId,
// CertificateTypeId, Certificate, IssuerCertificates, PrivateKeyFormat,
// PrivateKey): the certificate (and a PEM key, or the key of the last
// signing request) becomes the server's from the next handshake on.
func (s *Server) updateCertificate(ctx context.Context, _ ua.NodeID, in []ua.Variant) (ua.StatusCode, []ua.Variant) {
	ts, _, st := s.securityAdmin(ctx)
	if st != status.Good {
		return st, nil
	}
	certType, st := s.checkGroup(in)
	if st != status.Good {
		return st, nil
	}
	der, _ := in[2].ByteString()
	if !s.keyOfType(certType, der) {
		return status.BadCertificateInvalid, nil
	}
	var issuers [][]byte
	if v, ok := in[3].Value().([][]byte); ok {
		issuers = v
	}
	format, _ := in[4].StringValue()
	key, _ := in[5].ByteString()
	if len(key) > 0 && format != "PEM" {
		return status.BadNotSupported, nil
	}
	if err := ts.UpdateCertificate(certType, der, issuers, key, s.cfg.ApplicationURI); err != nil {
		return status.BadCertificateInvalid, nil
	}
	return status.Good, []ua.Variant{ua.MustVariant(false)}
}

// keyOfType reports whether the certificate der has a key of the
// certificate type: RSA, or ECDSA on the curve of the ECC type.
func (s *Server) keyOfType(certType string, der []byte) bool {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return false
	}
	if certType == "rsa" {
		_, ok := c.PublicKey.(*rsa.PublicKey)
		return ok
	}
	for _, p := range s.cfg.Security.ECCPolicies {
		if p.CertificateType() == certType {
			_, ok := p.CheckKey(c.PublicKey)
			return ok
		}
	}
	return false
}

// applyChanges answers ApplyChanges: every change took effect already.
func (s *Server) applyChanges(ctx context.Context, _ ua.NodeID, _ []ua.Variant) (ua.StatusCode, []ua.Variant) {
	_, _, st := s.securityAdmin(ctx)
	return st, nil
}

// cancelChanges answers CancelChanges (OPC 10000-12 §7.10.9): it drops
// the changes that wait for ApplyChanges, and edged has none (every
// change takes effect at once, so none is left to cancel): Good for a
// security administrator. A TrustList opened for writing and not yet
// closed with CloseAndUpdate is not a change; its handle stays open.
func (s *Server) cancelChanges(ctx context.Context, _ ua.NodeID, _ []ua.Variant) (ua.StatusCode, []ua.Variant) {
	_, _, st := s.securityAdmin(ctx)
	return st, nil
}

func (s *Server) trustChanged(g trustGroup) {
	t := s.trustOf(g)
	t.mu.Lock()
	t.updated = s.clock()
	t.mu.Unlock()
}
