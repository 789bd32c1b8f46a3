package addrspace

import (
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// ReadContext carries what the operations of one Read request share: the
// user, the server timestamp (taken from the Space's clock at the first
// operation) and one snapshot per ValueSource (taken at the first
// operation that needs it), so that all values of a request come from
// one image. A session keeps one ReadContext, calls Reset before each
// request, and uses it from one goroutine with one Space. After the first
// requests it allocates nothing.
type ReadContext struct {
	// User is the session's user; nil has every right the nodes grant.
	User User

	snaps   []reqSnap // by SourceID-1
	now     time.Time
	haveNow bool
	prop    Node         // the node of a Property being read
	propDV  ua.DataValue // and its Value
}

// Reset starts a new request: the next operation takes fresh snapshots
// and a fresh server timestamp. It keeps User. It releases the snapshots
// of the last request, like Done.
func (rc *ReadContext) Reset() {
	rc.Done()
	rc.haveNow = false
}

// SetServerTime sets the request's server timestamp to t, which the
// caller read from the Space's clock, so that the request does not read
// the clock again; call it after Reset.
func (rc *ReadContext) SetServerTime(t time.Time) {
	rc.now, rc.haveNow = t, true
}

// reqSnap is a request's snapshot of one source: taken by the request
// (to release at Done) or given to it (UseSnapshot).
type reqSnap struct {
	snap  Snapshot
	taken bool
}

// Done releases the snapshots the request took (see Releaser), so that
// their sources may reuse them: call it after a request's last operation
// when the next request may be long in coming.
func (rc *ReadContext) Done() {
	for i := range rc.snaps {
		if rc.snaps[i].taken {
			ReleaseSnapshot(rc.snaps[i].snap)
		}
	}
	clear(rc.snaps)
}

// grow makes room in snaps for n sources.
func (rc *ReadContext) grow(n int) {
	if cap(rc.snaps) >= n {
		rc.snaps = rc.snaps[:n]
	} else {
		rc.snaps = append(rc.snaps[:cap(rc.snaps)], make([]reqSnap, n-cap(rc.snaps))...)
	}
}

// serverTime returns the request's server timestamp.
func (rc *ReadContext) serverTime(s *Space) time.Time {
	if !rc.haveNow {
		rc.now, rc.haveNow = s.clock(), true
	}
	return rc.now
}

// snapshot returns the request's snapshot of source id.
func (rc *ReadContext) snapshot(s *Space, id SourceID) Snapshot {
	i := int(id) - 1
	if i >= len(rc.snaps) {
		rc.grow(len(s.sources))
	}
	if rc.snaps[i].snap == nil {
		rc.snaps[i] = reqSnap{s.sources[i].Snapshot(), true}
	}
	return rc.snaps[i].snap
}

// Names of the data encodings (DataEncoding of ReadValueId).
const (
	EncodingDefaultBinary = "Default Binary"
	EncodingDefaultXML    = "Default XML"
	EncodingDefaultJSON   = "Default JSON"
)

// Read performs one operation of the Read service (OPC 10000-4 §5.10.2)
// into dv, overwriting all its fields and reusing its Value's storage.
// Every attribute of OPC 10000-3 is served for the node classes that have
// it; RolePermissions and UserRolePermissions when the user is a
// Permissions; DataTypeDefinition and AccessRestrictions are not
// supported (BadAttributeIdInvalid), nor is an
// attribute of another node class. The Value of a Variable needs
// CurrentRead in its AccessLevel (else BadNotReadable) and in the user's
// (else BadUserAccessDenied). IndexRange applies to any array, String or
// ByteString attribute (see NumericRange.Apply). DataEncoding is allowed
// for the Value of a Variable whose DataType is a Structure: only
// "Default Binary" is supported (BadDataEncodingUnsupported for "Default
// XML" and "Default JSON", BadDataEncodingInvalid otherwise).
//
// A source whose Snapshot returns nil (no image yet) gives
// BadWaitingForInitialData.
//
// Timestamps follow ts: the source timestamp is the value's (Value only),
// the server timestamp the request's (rc); ts outside 0-3 is treated as
// Neither (the service layer rejects it first). A failed operation leaves
// only the Status in dv.
//
// Reading the Value of a static variable, or of an external one whose
// snapshot does not allocate, allocates nothing. The Value shares storage
// with the space: do not modify it.
func (s *Space) Read(rc *ReadContext, rv *ua.ReadValueID, ts ua.TimestampsToReturn, dv *ua.DataValue) {
	s.mu.RLock()
	st := s.read(rc, rv, ts, dv)
	s.mu.RUnlock()
	if st != status.Good {
		dv.Value.Reset()
		*dv = ua.DataValue{Status: st}
	}
}

// readBatch is how many operations ReadMany reads under one hold of the
// Space's lock: the lock's two atomic operations cost as much as a third
// of a held Variable's Read, and 64 Reads keep a waiting writer (AddNode,
// a configuration change) a few microseconds at most.
const readBatch = 64

// ReadMany reads rvs[i] into out[i] as Read does, taking the Space's lock
// once per readBatch operations. out must be at least as long as rvs.
func (s *Space) ReadMany(rc *ReadContext, rvs []ua.ReadValueID, ts ua.TimestampsToReturn, out []ua.DataValue) {
	out = out[:len(rvs)]
	for start := 0; start < len(rvs); start += readBatch {
		end := min(start+readBatch, len(rvs))
		s.mu.RLock()
		for i := start; i < end; i++ {
			if st := s.read(rc, &rvs[i], ts, &out[i]); st != status.Good {
				out[i].Value.Reset()
				out[i] = ua.DataValue{Status: st}
			}
		}
		s.mu.RUnlock()
	}
}

func (s *Space) read(rc *ReadContext, rv *ua.ReadValueID, ts ua.TimestampsToReturn, dv *ua.DataValue) ua.StatusCode {
	n := s.lookupInto(&rv.NodeID, &rc.prop, &rc.propDV)
	if n == nil {
		return status.BadNodeIDUnknown
	}
	attr := ua.AttributeID(rv.AttributeID)
	if attr == ua.AttributeIDRolePermissions || attr == ua.AttributeIDUserRolePermissions {
		return readPermissions(rc, n, attr, dv)
	}
	if !hasAttribute(n.Class, attr) {
		return status.BadAttributeIDInvalid
	}
	var r NumericRange
	if rv.IndexRange != "" {
		var err error
		if r, err = ParseNumericRange(rv.IndexRange); err != nil {
			return status.BadIndexRangeInvalid
		}
	}
	if rv.DataEncoding != (ua.QualifiedName{}) {
		if st := s.checkEncoding(n, attr, rv.DataEncoding); st != status.Good {
			return st
		}
	}
	if attr == ua.AttributeIDValue {
		if n.Class == ua.NodeClassVariable {
			if n.AccessLevel&uint8(ua.AccessLevelTypeCurrentRead) == 0 {
				return status.BadNotReadable
			}
			if rc.User != nil && rc.User.AccessLevel(n)&uint8(ua.AccessLevelTypeCurrentRead) == 0 {
				return status.BadUserAccessDenied
			}
		}
		if n.Source != 0 {
			snap := rc.snapshot(s, n.Source)
			if snap == nil {
				return status.BadWaitingForInitialData
			}
			dv.Status = status.Good
			dv.SourceTimestamp, dv.SourcePicoseconds = time.Time{}, 0
			snap.Value(n.Handle, dv)
		} else if n.Value != nil {
			*dv = *n.Value
		} else {
			*dv = ua.DataValue{}
		}
		if ts != ua.TimestampsToReturnSource && ts != ua.TimestampsToReturnBoth {
			dv.SourceTimestamp, dv.SourcePicoseconds = time.Time{}, 0
		}
	} else {
		*dv = ua.DataValue{Value: dv.Value}
		s.readAttribute(rc, n, attr, &dv.Value)
	}
	dv.ServerTimestamp, dv.ServerPicoseconds = time.Time{}, 0
	if ts == ua.TimestampsToReturnServer || ts == ua.TimestampsToReturnBoth {
		dv.ServerTimestamp = rc.serverTime(s)
	}
	if r.n > 0 && !dv.Status.IsBad() {
		v, st := r.Apply(dv.Value)
		if st != status.Good {
			return st
		}
		dv.Value = v
	}
	return status.Good
}

// checkEncoding checks a DataEncoding (see Read).
func (s *Space) checkEncoding(n *Node, attr ua.AttributeID, enc ua.QualifiedName) ua.StatusCode {
	if attr != ua.AttributeIDValue || n.Class != ua.NodeClassVariable || !isSubtype(s.nodes.get(n.DataType), s.structure) {
		return status.BadDataEncodingInvalid
	}
	if enc.NamespaceIndex != 0 {
		return status.BadDataEncodingInvalid
	}
	switch enc.Name {
	case EncodingDefaultBinary:
		return status.Good
	case EncodingDefaultXML, EncodingDefaultJSON:
		return status.BadDataEncodingUnsupported
	}
	return status.BadDataEncodingInvalid
}

// hasAttribute reports whether nodes of class c have attribute a here.
func hasAttribute(c ua.NodeClass, a ua.AttributeID) bool {
	switch a {
	case ua.AttributeIDNodeID, ua.AttributeIDNodeClass, ua.AttributeIDBrowseName, ua.AttributeIDDisplayName,
		ua.AttributeIDDescription, ua.AttributeIDWriteMask, ua.AttributeIDUserWriteMask:
		return true
	case ua.AttributeIDIsAbstract:
		return c == ua.NodeClassObjectType || c == ua.NodeClassVariableType ||
			c == ua.NodeClassReferenceType || c == ua.NodeClassDataType
	case ua.AttributeIDSymmetric, ua.AttributeIDInverseName:
		return c == ua.NodeClassReferenceType
	case ua.AttributeIDContainsNoLoops:
		return c == ua.NodeClassView
	case ua.AttributeIDEventNotifier:
		return c == ua.NodeClassObject || c == ua.NodeClassView
	case ua.AttributeIDValue, ua.AttributeIDDataType, ua.AttributeIDValueRank, ua.AttributeIDArrayDimensions:
		return c == ua.NodeClassVariable || c == ua.NodeClassVariableType
	case ua.AttributeIDAccessLevel, ua.AttributeIDUserAccessLevel, ua.AttributeIDMinimumSamplingInterval,
		ua.AttributeIDHistorizing, ua.AttributeIDAccessLevelEx:
		return c == ua.NodeClassVariable
	case ua.AttributeIDExecutable, ua.AttributeIDUserExecutable:
		return c == ua.NodeClassMethod
	}
	// DataTypeDefinition, RolePermissions, UserRolePermissions,
	// AccessRestrictions: not supported; other ids: invalid.
	return false
}

// readAttribute sets v to attribute a (not Value) of n.
func (s *Space) readAttribute(rc *ReadContext, n *Node, a ua.AttributeID, v *ua.Variant) {
	switch a {
	case ua.AttributeIDNodeID:
		*v = ua.MustVariant(n.ID)
	case ua.AttributeIDNodeClass:
		v.SetInt32(int32(n.Class))
	case ua.AttributeIDBrowseName:
		*v = ua.MustVariant(n.BrowseName)
	case ua.AttributeIDDisplayName:
		*v = ua.MustVariant(n.DisplayName)
	case ua.AttributeIDDescription:
		*v = ua.MustVariant(n.Description)
	case ua.AttributeIDWriteMask:
		v.SetUint32(n.WriteMask)
	case ua.AttributeIDUserWriteMask:
		v.SetUint32(userWriteMask(rc.User, n))
	case ua.AttributeIDIsAbstract:
		v.SetBool(n.IsAbstract)
	case ua.AttributeIDSymmetric:
		v.SetBool(n.Symmetric)
	case ua.AttributeIDInverseName:
		var inv ua.LocalizedText
		if n.InverseName != nil {
			inv = *n.InverseName
		}
		*v = ua.MustVariant(inv)
	case ua.AttributeIDContainsNoLoops:
		v.SetBool(n.ContainsNoLoops)
	case ua.AttributeIDEventNotifier:
		v.SetUint8(n.EventNotifier)
	case ua.AttributeIDDataType:
		*v = ua.MustVariant(n.DataType)
	case ua.AttributeIDValueRank:
		v.SetInt32(n.ValueRank)
	case ua.AttributeIDArrayDimensions:
		*v = ua.MustVariant(n.ArrayDimensions)
	case ua.AttributeIDAccessLevel:
		v.SetUint8(n.AccessLevel)
	case ua.AttributeIDUserAccessLevel:
		v.SetUint8(userAccessLevel(rc.User, n))
	case ua.AttributeIDAccessLevelEx:
		v.SetUint32(uint32(n.AccessLevel))
	case ua.AttributeIDMinimumSamplingInterval:
		v.SetFloat64(n.MinimumSamplingInterval)
	case ua.AttributeIDHistorizing:
		v.SetBool(n.Historizing)
	case ua.AttributeIDExecutable:
		v.SetBool(n.Executable)
	case ua.AttributeIDUserExecutable:
		v.SetBool(n.Executable && (rc.User == nil || rc.User.Executable(n)))
	}
}

func userAccessLevel(u User, n *Node) uint8 {
	if u == nil {
		return n.AccessLevel
	}
	return n.AccessLevel & u.AccessLevel(n)
}

func userWriteMask(u User, n *Node) uint32 {
	if u == nil {
		return n.WriteMask
	}
	return n.WriteMask & u.WriteMask(n)
}

// Permissions is a User that also says what each role may do with a node,
// for the RolePermissions and UserRolePermissions attributes (OPC
// 10000-3 §5.2.9, §5.2.10): all roles', and those of the user's roles.
type Permissions interface {
	RolePermissions(n *Node) []ua.RolePermissionType
	UserRolePermissions(n *Node) []ua.RolePermissionType
}

// readPermissions reads RolePermissions or UserRolePermissions.
func readPermissions(rc *ReadContext, n *Node, attr ua.AttributeID, dv *ua.DataValue) ua.StatusCode {
	p, ok := rc.User.(Permissions)
	if !ok {
		return status.BadAttributeIDInvalid
	}
	var rp []ua.RolePermissionType
	if attr == ua.AttributeIDRolePermissions {
		rp = p.RolePermissions(n)
	} else {
		rp = p.UserRolePermissions(n)
	}
	eo := make([]ua.ExtensionObject, len(rp))
	for i := range rp {
		eo[i].Body = &rp[i]
	}
	*dv = ua.DataValue{Value: ua.MustVariant(eo), Status: status.Good}
	return status.Good
}
