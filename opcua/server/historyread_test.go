package server

import (
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/history"
	"github.com/edged/edged/opcua/server/internal/subtest"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// memHistory is a History in memory: handle 1's values, appended to by
// the test while reads go on.
type memHistory struct {
	mu   sync.Mutex
	vals []history.Value
}

func (m *memHistory) add(t time.Time, x float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := history.Value{T: t.UnixNano(), Status: status.Good}
	v.V.SetFloat64(x)
	m.vals = append(m.vals, v)
}

func (m *memHistory) Read(h uint32, from, to int64, reverse bool, fn func(*history.Value) bool) error {
	m.mu.Lock()
	vals := append([]history.Value(nil), m.vals...)
	m.mu.Unlock()
	i := sort.Search(len(vals), func(i int) bool { return vals[i].T >= from })
	j := sort.Search(len(vals), func(i int) bool { return vals[i].T > to })
	if reverse {
		for k := j - 1; k >= i; k-- {
			if !fn(&vals[k]) {
				break
			}
		}
		return nil
	}
	for k := i; k < j; k++ {
		if !fn(&vals[k]) {
			break
		}
	}
	return nil
}

func (m *memHistory) Aggregation(uint32) history.Config {
	return history.Config{TreatUncertainAsBad: true, PercentDataBad: 100, PercentDataGood: 100}
}

// histFixture is a server with a historized variable ns=1;s=plc.Temp
// (its history in mem), an unhistorized one, plc.Plain, and a session.
// addHistVars adds plc.Temp (Double, historized, handle 1, its history
// in r) and plc.Plain (not historized) to s.
func addHistVars(tb testing.TB, s *Server, r History) (temp, plain ua.NodeID) {
	tb.Helper()
	as := s.AddressSpace()
	folder := ua.NewStringNodeID(1, "plc")
	if err := as.AddNode(&addrspace.Node{ID: folder, Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{NamespaceIndex: 1, Name: "plc"}},
		addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true, Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}}); err != nil {
		tb.Fatal(err)
	}
	hc := ua.NewStringNodeID(1, "HA Configuration")
	if err := as.AddNode(&addrspace.Node{ID: hc, Class: ua.NodeClassObject, BrowseName: ua.QualifiedName{Name: "HA Configuration"}},
		addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasTypeDefinition), Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.HistoricalDataConfigurationType)}}); err != nil {
		tb.Fatal(err)
	}
	src := as.AddSource(addrspace.SourceFunc(func(h uint32, dv *ua.DataValue) { dv.Value.SetFloat64(1) }))
	cur := uint8(ua.AccessLevelTypeCurrentRead)
	if err := as.AddVariable(folder, &addrspace.Variable{Name: "Temp", Source: src, Handle: 1, DataType: id.Double,
		AccessLevel: cur | uint8(ua.AccessLevelTypeHistoryRead), Class: &addrspace.VariableClass{Historizing: true, HistoryConfiguration: hc}}); err != nil {
		tb.Fatal(err)
	}
	if err := as.AddVariable(folder, &addrspace.Variable{Name: "Plain", Source: src, Handle: 2, DataType: id.Double, AccessLevel: cur}); err != nil {
		tb.Fatal(err)
	}
	if err := s.AddHistory(src, r); err != nil {
		tb.Fatal(err)
	}
	return ua.NewStringNodeID(1, "plc.Temp"), ua.NewStringNodeID(1, "plc.Plain")
}

type histFixture struct {
	t     *testing.T
	s     *Server
	tc    *testConn
	mem   *memHistory
	temp  ua.NodeID
	plain ua.NodeID
	t0    time.Time
}

func newHistFixture(t *testing.T, cfg Config) *histFixture {
	s := newTestServer(t, cfg)
	f := &histFixture{t: t, s: s, mem: &memHistory{}, t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	f.temp, f.plain = addHistVars(t, s, f.mem)
	for i := range 100 {
		f.mem.add(f.t0.Add(time.Duration(i)*time.Second), float64(i))
	}
	f.tc = newTestConn(t, s, 1)
	f.tc.openSession()
	return f
}

func (f *histFixture) read(details ua.Body, nodes ...ua.HistoryReadValueID) *ua.HistoryReadResponse {
	f.t.Helper()
	return subtest.WantOK[ua.HistoryReadResponse](f.t, f.tc.call(&ua.HistoryReadRequest{
		HistoryReadDetails: ua.ExtensionObject{Body: details}, NodesToRead: nodes}))
}

func histValues(t *testing.T, r *ua.HistoryReadResult) []ua.DataValue {
	t.Helper()
	if r.HistoryData.Body == nil {
		return nil
	}
	hd, ok := r.HistoryData.Body.(*ua.HistoryData)
	if !ok {
		t.Fatalf("HistoryData is a %T", r.HistoryData.Body)
	}
	return hd.DataValues
}

// TestHistoryReadRawContinuation reads 100 values 30 at a time; values
// appended between the calls are read too, none twice.
func TestHistoryReadRawContinuation(t *testing.T) {
	f := newHistFixture(t, Config{})
	d := &ua.ReadRawModifiedDetails{StartTime: f.t0, EndTime: f.t0.Add(time.Hour), NumValuesPerNode: 30}
	var got []float64
	cp := []byte(nil)
	for calls := 0; ; calls++ {
		if calls > 10 {
			t.Fatal("no end")
		}
		r := f.read(d, ua.HistoryReadValueID{NodeID: f.temp, ContinuationPoint: cp}).Results[0]
		if r.StatusCode != status.Good {
			t.Fatalf("call %d: %v", calls, r.StatusCode)
		}
		for _, dv := range histValues(t, &r) {
			x, _ := dv.Value.Float64()
			got = append(got, x)
			if !dv.SourceTimestamp.Equal(f.t0.Add(time.Duration(x) * time.Second)) {
				t.Fatalf("value %v at %v", x, dv.SourceTimestamp)
			}
			if !dv.ServerTimestamp.IsZero() {
				t.Fatalf("a server timestamp, not asked for")
			}
		}
		if calls == 1 {
			for i := 100; i < 110; i++ {
				f.mem.add(f.t0.Add(time.Duration(i)*time.Second), float64(i))
			}
		}
		cp = r.ContinuationPoint
		if cp == nil {
			break
		}
	}
	if len(got) != 110 {
		t.Fatalf("%d values", len(got))
	}
	for i, x := range got {
		if x != float64(i) {
			t.Fatalf("value %d is %v", i, x)
		}
	}
}

// TestHistoryContinuationPoints: released points are gone, a session holds
// at most MaxHistoryContinuationPoints, a closed session's are gone, and
// another session's are not this one's.
func TestHistoryContinuationPoints(t *testing.T) {
	f := newHistFixture(t, Config{MaxHistoryContinuationPoints: 2})
	d := &ua.ReadRawModifiedDetails{StartTime: f.t0, EndTime: f.t0.Add(time.Hour), NumValuesPerNode: 10}
	node := ua.HistoryReadValueID{NodeID: f.temp}
	r := f.read(d, node, node, node).Results
	if r[0].ContinuationPoint == nil || r[1].ContinuationPoint == nil || r[2].StatusCode != status.BadNoContinuationPoints || len(histValues(t, &r[2])) != 0 {
		t.Fatalf("three reads with two points: %v %v %v", r[0].StatusCode, r[1].StatusCode, r[2].StatusCode)
	}
	cp0, cp1 := r[0].ContinuationPoint, r[1].ContinuationPoint
	rel := subtest.WantOK[ua.HistoryReadResponse](t, f.tc.call(&ua.HistoryReadRequest{HistoryReadDetails: ua.ExtensionObject{Body: d},
		ReleaseContinuationPoints: true, NodesToRead: []ua.HistoryReadValueID{{NodeID: f.temp, ContinuationPoint: cp0}}}))
	if rel.Results[0].StatusCode != status.Good || len(histValues(t, &rel.Results[0])) != 0 {
		t.Fatalf("release: %v", rel.Results[0].StatusCode)
	}
	if st := f.read(d, ua.HistoryReadValueID{NodeID: f.temp, ContinuationPoint: cp0}).Results[0].StatusCode; st != status.BadContinuationPointInvalid {
		t.Fatalf("released point: %v", st)
	}
	// The point of another node, or of another session, is invalid.
	if st := f.read(d, ua.HistoryReadValueID{NodeID: f.plain, ContinuationPoint: cp1}).Results[0].StatusCode; st != status.BadContinuationPointInvalid {
		t.Fatalf("another node's point: %v", st)
	}
	r = f.read(d, node).Results
	cp := r[0].ContinuationPoint
	other := newTestConn(t, f.s, 2)
	other.openSession()
	if st := subtest.WantOK[ua.HistoryReadResponse](t, other.call(&ua.HistoryReadRequest{HistoryReadDetails: ua.ExtensionObject{Body: d},
		NodesToRead: []ua.HistoryReadValueID{{NodeID: f.temp, ContinuationPoint: cp}}})).Results[0].StatusCode; st != status.BadContinuationPointInvalid {
		t.Fatalf("another session's point: %v", st)
	}
	// A closed session's points go with it.
	subtest.WantOK[ua.CloseSessionResponse](t, f.tc.call(&ua.CloseSessionRequest{DeleteSubscriptions: true}))
	var sess *session
	for _, s := range f.s.sessions.byToken {
		sess = s
	}
	if sess == nil || len(sess.hcps.list) != 0 {
		t.Fatalf("the other session holds %v", sess)
	}
}

// TestHistoryReadStatuses: what each kind of wrong operation gets.
func TestHistoryReadStatuses(t *testing.T) {
	f := newHistFixture(t, Config{})
	raw := &ua.ReadRawModifiedDetails{StartTime: f.t0, EndTime: f.t0.Add(time.Hour)}
	ops := []ua.HistoryReadValueID{
		{NodeID: f.plain},
		{NodeID: ua.NewStringNodeID(1, "nope")},
		{NodeID: ua.NewNumericNodeID(0, id.Server)},
		{NodeID: f.temp, DataEncoding: ua.QualifiedName{Name: "Default XML"}},
		{NodeID: f.temp, IndexRange: "x"},
		{NodeID: f.temp, ContinuationPoint: []byte{1, 2, 3}},
	}
	want := []ua.StatusCode{status.BadHistoryOperationUnsupported, status.BadNodeIDUnknown, status.BadHistoryOperationUnsupported,
		status.BadDataEncodingInvalid, status.BadIndexRangeInvalid, status.BadContinuationPointInvalid}
	for i, r := range f.read(raw, ops...).Results {
		if r.StatusCode != want[i] {
			t.Errorf("%v: %v, want %v", ops[i].NodeID, r.StatusCode, want[i])
		}
	}
	node := ua.HistoryReadValueID{NodeID: f.temp}
	for _, tc := range []struct {
		d    ua.Body
		want ua.StatusCode
	}{
		{&ua.ReadRawModifiedDetails{IsReadModified: true, StartTime: f.t0, EndTime: f.t0.Add(time.Hour)}, status.BadHistoryOperationUnsupported},
		{&ua.ReadRawModifiedDetails{StartTime: f.t0}, status.BadHistoryOperationInvalid},
		{&ua.ReadEventDetails{StartTime: f.t0, EndTime: f.t0.Add(time.Hour)}, status.BadHistoryOperationUnsupported},
		{&ua.ReadRawModifiedDetails{StartTime: f.t0.Add(time.Hour), EndTime: f.t0.Add(2 * time.Hour)}, status.GoodNoData},
		{&ua.ReadProcessedDetails{StartTime: f.t0, EndTime: f.t0.Add(time.Minute), ProcessingInterval: 10000,
			AggregateType: []ua.NodeID{ua.NewNumericNodeID(0, id.AggregateFunction_StandardDeviationSample)}}, status.BadAggregateNotSupported},
		{&ua.ReadProcessedDetails{StartTime: f.t0, EndTime: f.t0, ProcessingInterval: 10000,
			AggregateType: []ua.NodeID{ua.NewNumericNodeID(0, id.AggregateFunction_Average)}}, status.BadInvalidArgument},
		{&ua.ReadProcessedDetails{StartTime: f.t0, EndTime: f.t0.Add(time.Minute), ProcessingInterval: 10000,
			AggregateType:          []ua.NodeID{ua.NewNumericNodeID(0, id.AggregateFunction_Average)},
			AggregateConfiguration: ua.AggregateConfiguration{PercentDataGood: 10, PercentDataBad: 20}}, status.BadAggregateConfigurationRejected},
		{&ua.ReadAtTimeDetails{}, status.BadInvalidArgument},
	} {
		if st := f.read(tc.d, node).Results[0].StatusCode; st != tc.want {
			t.Errorf("%T %+v: %v, want %v", tc.d, tc.d, st, tc.want)
		}
	}
	// Service faults.
	subtest.WantFault(t, f.tc.call(&ua.HistoryReadRequest{NodesToRead: []ua.HistoryReadValueID{node}}), status.BadHistoryOperationInvalid)
	subtest.WantFault(t, f.tc.call(&ua.HistoryReadRequest{HistoryReadDetails: ua.ExtensionObject{Body: raw},
		TimestampsToReturn: ua.TimestampsToReturnNeither, NodesToRead: []ua.HistoryReadValueID{node}}), status.BadTimestampsToReturnInvalid)
	subtest.WantFault(t, f.tc.call(&ua.HistoryReadRequest{HistoryReadDetails: ua.ExtensionObject{Body: &ua.ReadProcessedDetails{
		StartTime: f.t0, EndTime: f.t0.Add(time.Minute)}}, NodesToRead: []ua.HistoryReadValueID{node}}), status.BadAggregateListMismatch)
	subtest.WantFault(t, f.tc.call(&ua.HistoryReadRequest{HistoryReadDetails: ua.ExtensionObject{Body: raw}}), status.BadNothingToDo)
	// HistoryUpdate: never.
	up := subtest.WantOK[ua.HistoryUpdateResponse](t, f.tc.call(&ua.HistoryUpdateRequest{HistoryUpdateDetails: []ua.ExtensionObject{
		{Body: &ua.UpdateDataDetails{NodeID: f.temp}}, {Body: &ua.DeleteRawModifiedDetails{NodeID: f.temp}}}}))
	if len(up.Results) != 2 || up.Results[0].StatusCode != status.BadHistoryOperationUnsupported || up.Results[1].StatusCode != status.BadHistoryOperationUnsupported {
		t.Errorf("HistoryUpdate: %+v", up.Results)
	}
}

// TestHistoryReadProcessedAndAtTime: averages of 10 s over a minute,
// a continuation point when MaxReturnDataValues is reached, values at
// times, server timestamps.
func TestHistoryReadProcessedAndAtTime(t *testing.T) {
	f := newHistFixture(t, Config{MaxReturnDataValues: 4})
	d := &ua.ReadProcessedDetails{StartTime: f.t0, EndTime: f.t0.Add(time.Minute), ProcessingInterval: 10000,
		AggregateType: []ua.NodeID{ua.NewNumericNodeID(0, id.AggregateFunction_Average)}, AggregateConfiguration: ua.AggregateConfiguration{UseServerCapabilitiesDefaults: true}}
	var avgs []float64
	var cp []byte
	for {
		r := f.read(d, ua.HistoryReadValueID{NodeID: f.temp, ContinuationPoint: cp}).Results[0]
		for _, dv := range histValues(t, &r) {
			x, _ := dv.Value.Float64()
			avgs = append(avgs, x)
			if dv.Status != history.Calculated {
				t.Errorf("status %v", dv.Status)
			}
		}
		if cp = r.ContinuationPoint; cp == nil {
			break
		}
	}
	want := []float64{4.5, 14.5, 24.5, 34.5, 44.5, 54.5}
	if len(avgs) != len(want) {
		t.Fatalf("averages %v", avgs)
	}
	for i := range want {
		if avgs[i] != want[i] {
			t.Fatalf("averages %v, want %v", avgs, want)
		}
	}
	at := &ua.ReadAtTimeDetails{ReqTimes: []time.Time{f.t0.Add(2 * time.Second), f.t0.Add(2500 * time.Millisecond)}}
	r := subtest.WantOK[ua.HistoryReadResponse](t, f.tc.call(&ua.HistoryReadRequest{HistoryReadDetails: ua.ExtensionObject{Body: at},
		TimestampsToReturn: ua.TimestampsToReturnBoth, NodesToRead: []ua.HistoryReadValueID{{NodeID: f.temp}}})).Results[0]
	vs := histValues(t, &r)
	if len(vs) != 2 {
		t.Fatalf("%d values", len(vs))
	}
	if x, _ := vs[0].Value.Float64(); x != 2 || vs[0].Status != status.Good {
		t.Errorf("at 2 s: %v %v", vs[0].Value, vs[0].Status)
	}
	if x, _ := vs[1].Value.Float64(); x != 2.5 || vs[1].Status != history.Interpolated || !vs[1].ServerTimestamp.Equal(at.ReqTimes[1]) {
		t.Errorf("at 2.5 s: %v %v %v", vs[1].Value, vs[1].Status, vs[1].ServerTimestamp)
	}
}

// TestHistoryCapabilities: the server says it reads history, with which
// aggregates, and the variable says it is historized.
func TestHistoryCapabilities(t *testing.T) {
	f := newHistFixture(t, Config{})
	rr := subtest.WantOK[ua.ReadResponse](t, f.tc.call(&ua.ReadRequest{NodesToRead: []ua.ReadValueID{
		{NodeID: ua.NewNumericNodeID(0, id.HistoryServerCapabilities_AccessHistoryDataCapability), AttributeID: uint32(ua.AttributeIDValue)},
		{NodeID: ua.NewNumericNodeID(0, id.HistoryServerCapabilities_MaxReturnDataValues), AttributeID: uint32(ua.AttributeIDValue)},
		{NodeID: ua.NewNumericNodeID(0, id.Server_ServerCapabilities_MaxHistoryContinuationPoints), AttributeID: uint32(ua.AttributeIDValue)},
		{NodeID: f.temp, AttributeID: uint32(ua.AttributeIDHistorizing)},
		{NodeID: f.temp, AttributeID: uint32(ua.AttributeIDAccessLevel)},
		{NodeID: f.temp, AttributeID: uint32(ua.AttributeIDUserAccessLevel)},
		{NodeID: f.plain, AttributeID: uint32(ua.AttributeIDHistorizing)},
	}}))
	r := rr.Results
	if b, _ := r[0].Value.Bool(); !b {
		t.Errorf("AccessHistoryDataCapability %v", r[0].Value)
	}
	if n, _ := r[1].Value.Uint32(); n != DefaultMaxReturnDataValues {
		t.Errorf("MaxReturnDataValues %v", r[1].Value)
	}
	if n, _ := r[2].Value.Uint16(); n != DefaultMaxHistoryContinuationPoints {
		t.Errorf("MaxHistoryContinuationPoints %v", r[2].Value)
	}
	if b, _ := r[3].Value.Bool(); !b {
		t.Errorf("Historizing %v", r[3].Value)
	}
	for _, i := range []int{4, 5} {
		if al, _ := r[i].Value.Uint8(); al&uint8(ua.AccessLevelTypeHistoryRead) == 0 {
			t.Errorf("access level %v", r[i].Value)
		}
	}
	if b, _ := r[6].Value.Bool(); b {
		t.Errorf("Plain Historizing %v", r[6].Value)
	}
	br := subtest.WantOK[ua.BrowseResponse](t, f.tc.call(&ua.BrowseRequest{NodesToBrowse: []ua.BrowseDescription{
		{NodeID: ua.NewNumericNodeID(0, id.HistoryServerCapabilities_AggregateFunctions), BrowseDirection: ua.BrowseDirectionForward,
			ReferenceTypeID: ua.NewNumericNodeID(0, id.Organizes), ResultMask: 63},
		{NodeID: f.temp, BrowseDirection: ua.BrowseDirectionForward, ReferenceTypeID: ua.NewNumericNodeID(0, id.HasHistoricalConfiguration), ResultMask: 63},
	}}))
	if n := len(br.Results[0].References); n != len(history.Aggregates) {
		t.Errorf("%d aggregate functions listed, want %d", n, len(history.Aggregates))
	}
	if refs := br.Results[1].References; len(refs) != 1 || refs[0].BrowseName.Name != "HA Configuration" {
		t.Errorf("HasHistoricalConfiguration: %+v", refs)
	}
}

// noRoles authenticates every user name with no role at all.
type noRoles struct{}

func (noRoles) Authenticate(token ua.Body) (Identity, error) {
	if t, ok := token.(*ua.UserNameIdentityToken); ok {
		return Identity{UserName: t.UserName}, nil
	}
	return AnonymousOnly{}.Authenticate(token)
}

// TestHistoryReadNeedsTheRight: a user without the HistoryRead right gets
// Bad_UserAccessDenied.
func TestHistoryReadNeedsTheRight(t *testing.T) {
	f := newHistFixture(t, Config{Authenticator: noRoles{}})
	tc := newTestConn(t, f.s, 3)
	cs := subtest.WantOK[ua.CreateSessionResponse](t, tc.call(&ua.CreateSessionRequest{}))
	tc.token = cs.AuthenticationToken
	b := &ua.UserNameIdentityToken{PolicyID: "username", UserName: "nobody"}
	subtest.WantOK[ua.ActivateSessionResponse](t, tc.call(&ua.ActivateSessionRequest{UserIdentityToken: ua.ExtensionObject{Body: b}}))
	r := subtest.WantOK[ua.HistoryReadResponse](t, tc.call(&ua.HistoryReadRequest{
		HistoryReadDetails: ua.ExtensionObject{Body: &ua.ReadRawModifiedDetails{StartTime: f.t0, EndTime: f.t0.Add(time.Hour)}},
		NodesToRead:        []ua.HistoryReadValueID{{NodeID: f.temp}}}))
	if st := r.Results[0].StatusCode; st != status.BadUserAccessDenied {
		t.Errorf("%v", st)
	}
}
