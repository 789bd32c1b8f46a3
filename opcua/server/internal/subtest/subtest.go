// Package subtest holds what the tests of opcua/server and of its
// subscription engine (internal/subs) share: the variables they monitor,
// a channel that records the responses posted to it, and helpers to build
// requests and read responses. It is imported by tests only.
package subtest

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/opcua/addrspace"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// Vars are the test variables of namespace 1 under Objects: "ext" (handle
// 1) and "slow" (handle 2, MinimumSamplingInterval 100 ms) of one value
// source, both reading the Double of Vars, "static" (a Double 1.5 with no
// source) and ext's EURange property (0 to 200).
type Vars struct {
	Src addrspace.SourceID
	val atomic.Uint64 // float64 bits
}

// AddVars adds the test variables to as.
func AddVars(t testing.TB, as *addrspace.Space) *Vars {
	v := &Vars{}
	v.Src = as.AddSource(addrspace.SourceFunc(func(_ uint32, dv *ua.DataValue) {
		dv.Value.SetFloat64(math.Float64frombits(v.val.Load()))
	}))
	objects := addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.Organizes), IsInverse: true,
		Target: ua.ExpandedNodeID{NodeID: ua.NewNumericNodeID(0, id.ObjectsFolder)}}
	add := func(name string, n addrspace.Node) {
		n.ID = ua.NewStringNodeID(1, name)
		n.Class = ua.NodeClassVariable
		n.BrowseName = ua.QualifiedName{NamespaceIndex: 1, Name: name}
		n.DataType = ua.NewNumericNodeID(0, id.Double)
		n.ValueRank = addrspace.ValueRankScalar
		n.AccessLevel = uint8(ua.AccessLevelTypeCurrentRead | ua.AccessLevelTypeCurrentWrite)
		if err := as.AddNode(&n, objects); err != nil {
			t.Fatal(err)
		}
	}
	add("ext", addrspace.Node{Source: v.Src, Handle: 1})
	add("slow", addrspace.Node{Source: v.Src, Handle: 2, MinimumSamplingInterval: 100})
	add("static", addrspace.Node{Value: &ua.DataValue{Value: ua.MustVariant(1.5)}})
	if err := as.AddNode(&addrspace.Node{
		ID:          ua.NewStringNodeID(1, "ext.EURange"),
		Class:       ua.NodeClassVariable,
		BrowseName:  ua.QualifiedName{Name: "EURange"},
		DataType:    ua.NewNumericNodeID(0, id.Range),
		ValueRank:   addrspace.ValueRankScalar,
		AccessLevel: uint8(ua.AccessLevelTypeCurrentRead),
		Value:       &ua.DataValue{Value: ua.MustVariant(ua.ExtensionObject{Body: &ua.Range{Low: 0, High: 200}})},
	}, addrspace.Reference{TypeID: ua.NewNumericNodeID(0, id.HasProperty), IsInverse: true,
		Target: ua.ExpandedNodeID{NodeID: ua.NewStringNodeID(1, "ext")}}); err != nil {
		t.Fatal(err)
	}
	return v
}

// Set gives ext and slow the value x (their source reads it from now on).
func (v *Vars) Set(x float64) { v.val.Store(math.Float64bits(x)) }

// Item is a Reporting request for attribute attr of the namespace-1
// variable name: client handle 7, sampling interval si, queue size q,
// discard oldest, and filter when not nil.
func Item(name string, attr ua.AttributeID, si float64, q uint32, filter any) ua.MonitoredItemCreateRequest {
	r := ua.MonitoredItemCreateRequest{
		ItemToMonitor:  ua.ReadValueID{NodeID: ua.NewStringNodeID(1, name), AttributeID: uint32(attr)},
		MonitoringMode: ua.MonitoringModeReporting,
		RequestedParameters: ua.MonitoringParameters{
			ClientHandle: 7, SamplingInterval: si, QueueSize: q, DiscardOldest: true,
		},
	}
	if filter != nil {
		r.RequestedParameters.Filter = ua.ExtensionObject{Body: filter.(ua.Body)}
	}
	return r
}

// Values returns the Double values of the data changes in r and their
// statuses.
func Values(r *ua.PublishResponse) (vs []float64, st []ua.StatusCode) {
	for _, eo := range r.NotificationMessage.NotificationData {
		if dcn, ok := eo.Body.(*ua.DataChangeNotification); ok {
			for _, n := range dcn.MonitoredItems {
				x, _ := n.Value.Value.Float64()
				vs = append(vs, x)
				st = append(st, n.Value.Status)
			}
		}
	}
	return vs, st
}

// FaultOf returns the ServiceResult of a ServiceFault, Good if resp is no
// fault.
func FaultOf(resp ua.Body) ua.StatusCode {
	if f, ok := resp.(*ua.ServiceFault); ok {
		return f.ResponseHeader.ServiceResult
	}
	return status.Good
}

// WantFault fails t unless resp is a ServiceFault of want.
func WantFault(t testing.TB, resp ua.Body, want ua.StatusCode) {
	t.Helper()
	if got := FaultOf(resp); got != want {
		t.Fatalf("got %T with %v, want a ServiceFault %v", resp, got, want)
	}
}

// WantOK returns resp as a *T, failing t if it is not one.
func WantOK[T any](t testing.TB, resp ua.Body) *T {
	t.Helper()
	r, ok := any(resp).(*T)
	if !ok {
		t.Fatalf("got %T (%v), want %T", resp, FaultOf(resp), r)
	}
	return r
}

// Channel records the responses written or posted to it, in order. Its
// ID is fixed.
type Channel struct {
	Num uint32 // the channel id

	Mu  sync.Mutex
	Out [][]byte // the messages written, oldest first
}

func (c *Channel) ID() uint32 { return c.Num }

// WriteResponse records a copy of msg.
func (c *Channel) WriteResponse(_ uint32, msg []byte) error {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.Out = append(c.Out, append([]byte(nil), msg...))
	return nil
}

func (c *Channel) QueueResponse(id uint32, msg []byte) error { return c.WriteResponse(id, msg) }

func (c *Channel) PostResponse(id uint32, msg []byte) error { return c.WriteResponse(id, msg) }

// Next waits (up to 10 s) for the oldest response not taken yet, and
// returns it decoded.
func (c *Channel) Next(t testing.TB) ua.Body {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		c.Mu.Lock()
		var msg []byte
		if len(c.Out) > 0 {
			msg = c.Out[0]
			c.Out = c.Out[1:]
		}
		c.Mu.Unlock()
		if msg != nil {
			resp, err := ua.DecodeMessage(ua.NewDecoder(msg))
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
	}
	t.Fatal("no asynchronous response within 10 s")
	return nil
}

// CreateSub creates a subscription with call (a client's request
// function) and returns its id: publishing enabled, the interval in ms
// and the counts as given.
func CreateSub(t testing.TB, call func(ua.Body) ua.Body, interval float64, keepAlive, lifetime uint32) uint32 {
	t.Helper()
	r := WantOK[ua.CreateSubscriptionResponse](t, call(&ua.CreateSubscriptionRequest{
		RequestedPublishingInterval: interval, RequestedMaxKeepAliveCount: keepAlive,
		RequestedLifetimeCount: lifetime, PublishingEnabled: true,
	}))
	return r.SubscriptionID
}

// CreateItems creates items in subscription sub with call (timestamps
// Both) and returns their results.
func CreateItems(t testing.TB, call func(ua.Body) ua.Body, sub uint32, items ...ua.MonitoredItemCreateRequest) []ua.MonitoredItemCreateResult {
	t.Helper()
	r := WantOK[ua.CreateMonitoredItemsResponse](t, call(&ua.CreateMonitoredItemsRequest{
		SubscriptionID: sub, TimestampsToReturn: ua.TimestampsToReturnBoth, ItemsToCreate: items,
	}))
	return r.Results
}

// Clock is a settable clock for a server's Config.Clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// AnonymousActivate is an ActivateSession request with an anonymous
// identity token.
func AnonymousActivate() *ua.ActivateSessionRequest {
	return &ua.ActivateSessionRequest{UserIdentityToken: ua.ExtensionObject{
		TypeID:   (&ua.AnonymousIdentityToken{}).BinaryEncodingID(),
		Encoding: ua.ExtensionObjectBinary,
		Body:     &ua.AnonymousIdentityToken{PolicyID: "anonymous"},
	}}
}

// OpenSession creates and activates an anonymous session through call;
// setToken gets the session's authentication token before the
// ActivateSession, for call to send it.
func OpenSession(t testing.TB, call func(ua.Body) ua.Body, setToken func(ua.NodeID)) *ua.CreateSessionResponse {
	t.Helper()
	cs := WantOK[ua.CreateSessionResponse](t, call(&ua.CreateSessionRequest{SessionName: "test", RequestedSessionTimeout: 60000}))
	setToken(cs.AuthenticationToken)
	WantOK[ua.ActivateSessionResponse](t, call(AnonymousActivate()))
	return cs
}
