package server

import (
	"context"
	"encoding/binary"
	"github.com/edged/edged/opcua/server/internal/subtest"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// FuzzServices drives the service handlers, the subscription manager
// above all, with a sequence of operations read from the fuzz input: a
// selector byte, then what the operation needs. A selector with the high
// bit set sends a raw request: the service is picked from the table
// (session services aside), a valid RequestHeader is prepended and the
// next length-prefixed bytes are the rest of the request, decoded by our
// decoder. Otherwise the operation builds a request from fuzzed fields
// (see fuzzOps), with subscription and item ids drawn from those created,
// 0 and random ones, or drives the manager: SourceChanged with random
// handles, a round of sourceChanges and tick at a later time. A second
// session takes subscriptions over, publishes, moves to a new channel,
// and is closed and opened again. Every
// response, immediate or asynchronous, must decode and be the request's
// response or a ServiceFault; a panic fails the target.
func FuzzServices(f *testing.F) {
	for _, seed := range fuzzServiceSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fz := newServiceFuzzer(t)
		defer fz.close()
		fz.run(data)
	})
}

// fuzzServiceSeeds returns a seed per structured operation, each after a
// subscription and an item were created, and one raw request per service.
func fuzzServiceSeeds() [][]byte {
	prefix := fuzzSeedPrefix()
	var seeds [][]byte
	for op := range byte(opCount) {
		s := append([]byte(nil), prefix...)
		s = append(s, op, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
		s = append(s, opPublish, 1, 1, 1, opTick, 9, opPublish, 0, opTick, 200)
		seeds = append(seeds, s)
	}
	for _, scenario := range fuzzScenarios() {
		seeds = append(seeds, append(append([]byte(nil), prefix...), scenario...))
	}
	for i := range fuzzRawServices {
		svc := fuzzRawServices[i]
		body := fuzzRawSeedBody(svc.request)
		s := append([]byte(nil), prefix...)
		s = append(s, 0x80|byte(i), byte(len(body)))
		s = append(s, body...)
		seeds = append(seeds, s)
	}
	return seeds
}

// fuzzItem is a MonitoredItemCreateRequest in the fuzzer's bytes: the
// Value of fuzzNodes[node], mode, sampling interval byte si (see
// interval), no filter, queue size q.
func fuzzItem(node, mode, si, q byte) []byte {
	return []byte{0x40, node, 0x40, 0, mode, 9, 0, 0, 0, si, 0, q, 1}
}

// fuzzScenarios are operations that take the seeds past the first
// steps, after fuzzSeedPrefix: each reaches a path of the manager that
// random mutations reach only rarely.
func fuzzScenarios() [][]byte {
	var (
		publish    = []byte{opPublish, 0, 0}                 // no acks, first session
		publish2   = []byte{opPublish, 0, 0x80}              // no acks, second session
		ack1       = []byte{opPublish, 1, 1, 1, 0}           // acknowledges sequence number 1 of subscription 1
		republish1 = []byte{opRepublish, 1, 1}               // sequence number 1 of subscription 1
		tick       = []byte{opTick, 10}                      // one cycle
		tickLong   = []byte{opTick, 255}                     // a quarter of a second
		to2        = []byte{opTransfer, 0, 1, 1, 1}          // subscription 1 to the second session, initial values
		to1        = []byte{opTransfer, 1, 1, 1, 0}          // and back
		change     = []byte{opSourceChanged, 1, 1, 24}       // ext changes to 60
		change2    = []byte{opSourceChanged, 1, 1, 28}       // ext changes to 70
		sampling   = []byte{opSetMonitoringMode, 1, 1, 1, 1} // subscription 1, Sampling, item 1
	)
	cat := func(parts ...[]byte) []byte { return slices.Concat(parts...) }
	return [][]byte{
		// Publish, acknowledge, republish, a message reused.
		cat(publish, tick, republish1, ack1, change, tick, tick, publish, change2, tick),
		// GetMonitoredItems and ResendData of subscription 1.
		cat([]byte{opCallMethods, 0, 0, 0, 1, 1, 1, 0}, []byte{opCallMethods, 0, 1, 0, 1, 1, 1, 0}, publish, tick),
		// Publish requests that time out.
		cat(publish, publish, publish, publish, tickLong, tickLong, tickLong, tickLong, tickLong),
		// A queued Publish answered Bad_NoSubscription when the last
		// subscription goes.
		cat(publish, []byte{opDeleteSubs, 0, 1, 1}),
		// Transferred, published by the second session, moved, back.
		cat(to2, publish2, tick, change, publish2, []byte{opMoveSession}, tick, to1, publish, tick),
		// The second session closes, its subscription orphaned, taken back.
		cat(to2, publish2, []byte{opCloseSession, 0}, tick, to1, publish, tick),
		// Items on the static variable, sampled on intervals (the due
		// heap), one following the publishing interval, which changes.
		cat([]byte{opCreateItems, 1, 2, 3}, fuzzItem(2, 2, 20, 2), fuzzItem(2, 2, 4, 2), fuzzItem(4, 2, 11, 3),
			tickLong, publish, tick, []byte{opModifySub, 1, 40, 0, 0, 0, 0}, tickLong, publish, tick),
		// A Sampling item reported through a trigger.
		cat([]byte{opCreateItems, 1, 0, 1}, fuzzItem(0, 1, 0, 4), sampling, change, tick,
			[]byte{opSetTriggering, 1, 1, 1, 1, 0, 1, 1}, change2, publish, tick, publish, tick),
	}
}

// fuzzSeedPrefix creates a subscription (interval, counts 0: revised)
// and a Reporting item on ext's Value, changes ext and runs the manager.
func fuzzSeedPrefix() []byte {
	return []byte{
		opCreateSub, 0, 0, 0, 0, 0, 0, // interval, lifetime, keep-alive, max notifications, enabled, priority
		opCreateItems, 1, 0, 1, // subscription 1, Source timestamps, one item
		0x40, 0, 0x40, 0, // Value of ext, no IndexRange, no DataEncoding
		2,          // Reporting
		7, 0, 0, 0, // ClientHandle
		0, 0, 2, 1, // SamplingInterval 0, no filter, QueueSize 2, DiscardOldest
		opSourceChanged, 2, 1, 2, 20, // handles 1 and 2, value 50
		opTick, 10,
	}
}

// fuzzRawSeedBody returns a well-formed request of the service, without
// type id and header, for the raw seeds.
func fuzzRawSeedBody(request uint32) []byte {
	var m ua.Body
	switch request {
	case id.CreateSubscriptionRequest_Encoding_DefaultBinary:
		m = &ua.CreateSubscriptionRequest{RequestedPublishingInterval: 10, RequestedLifetimeCount: 30, RequestedMaxKeepAliveCount: 3, PublishingEnabled: true}
	case id.CreateMonitoredItemsRequest_Encoding_DefaultBinary:
		m = &ua.CreateMonitoredItemsRequest{SubscriptionID: 1, TimestampsToReturn: ua.TimestampsToReturnBoth,
			ItemsToCreate: []ua.MonitoredItemCreateRequest{item("ext", ua.AttributeIDValue, 0, 2, &ua.DataChangeFilter{Trigger: 1, DeadbandType: 2, DeadbandValue: 10})}}
	case id.ModifyMonitoredItemsRequest_Encoding_DefaultBinary:
		m = &ua.ModifyMonitoredItemsRequest{SubscriptionID: 1, ItemsToModify: []ua.MonitoredItemModifyRequest{{MonitoredItemID: 1,
			RequestedParameters: ua.MonitoringParameters{SamplingInterval: -1, QueueSize: 5}}}}
	case id.SetMonitoringModeRequest_Encoding_DefaultBinary:
		m = &ua.SetMonitoringModeRequest{SubscriptionID: 1, MonitoringMode: ua.MonitoringModeSampling, MonitoredItemIDs: []uint32{1}}
	case id.SetTriggeringRequest_Encoding_DefaultBinary:
		m = &ua.SetTriggeringRequest{SubscriptionID: 1, TriggeringItemID: 1, LinksToAdd: []uint32{1, 2}}
	case id.PublishRequest_Encoding_DefaultBinary:
		m = &ua.PublishRequest{SubscriptionAcknowledgements: []ua.SubscriptionAcknowledgement{{SubscriptionID: 1, SequenceNumber: 1}}}
	case id.RepublishRequest_Encoding_DefaultBinary:
		m = &ua.RepublishRequest{SubscriptionID: 1, RetransmitSequenceNumber: 1}
	case id.ReadRequest_Encoding_DefaultBinary:
		m = &ua.ReadRequest{NodesToRead: []ua.ReadValueID{{NodeID: ua.NewStringNodeID(1, "ext"), AttributeID: uint32(ua.AttributeIDValue), IndexRange: "0:1"}}}
	case id.CallRequest_Encoding_DefaultBinary:
		m = &ua.CallRequest{MethodsToCall: []ua.CallMethodRequest{{ObjectID: ua.NewNumericNodeID(0, id.Server),
			MethodID: ua.NewNumericNodeID(0, id.Server_GetMonitoredItems), InputArguments: []ua.Variant{ua.MustVariant(uint32(1))}}}}
	default:
		// Services whose body after the header is a uint32 id and an
		// array of ids, or nothing useful: a few zero bytes.
		return []byte{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}
	}
	b := m.Encode(nil)
	var h ua.RequestHeader
	return b[len(h.Encode(nil)):]
}

// fuzzMaxNotif is the server's MaxNotificationsPerPublish in the fuzzer,
// small, so that publishing splits the queues of the items over messages.
const fuzzMaxNotif = 4

// Structured operations.
const (
	opCreateSub = iota
	opModifySub
	opSetPublishingMode
	opPublish
	opRepublish
	opTransfer
	opDeleteSubs
	opCreateItems
	opModifyItems
	opSetMonitoringMode
	opSetTriggering
	opDeleteItems
	opCallMethods
	opSourceChanged
	opTick
	opRead
	opCloseSession
	opMoveSession
	opCount
)

// fuzzRawServices are the services a raw operation picks from: every one
// but those that create, activate or close the session.
var fuzzRawServices = func() []*service {
	var out []*service
	for i := range services {
		switch services[i].name {
		case "CreateSession", "ActivateSession", "CloseSession":
			continue
		}
		out = append(out, &services[i])
	}
	return out
}()

type seqKey struct {
	tc  *testConn
	sub uint32
}

type serviceFuzzer struct {
	t      *testing.T
	fx     *subFixture
	tc2    *testConn // a second session, which transfers subscriptions
	in     []byte
	subs   []uint32
	items  []uint32
	offset time.Duration // how far the manager's time is ahead
	chID   uint32        // the last channel id given out

	// The requests answered later (Publish, Call) by connection and
	// request handle: each must be answered once.
	later map[*testConn]map[uint32]ua.Body
	// The last sequence number of a NotificationMessage with data, by
	// connection (session) and subscription: a transferred subscription's
	// status change to its old session may leave after the messages to
	// the new one.
	seq map[seqKey]uint32
}

func newServiceFuzzer(t *testing.T) *serviceFuzzer {
	fx := newSubFixture(t, Config{Subscriptions: SubscriptionLimits{
		MaxSubscriptionsPerSession: 4, MaxPublishRequestsPerSession: 4, MaxMonitoredItemsPerSubscription: 8,
		MaxNotificationsPerPublish: fuzzMaxNotif, MaxQueueSize: 4,
	}})
	tc2 := newTestConn(t, fx.s, 2)
	tc2.openSession()
	return &serviceFuzzer{t: t, fx: fx, tc2: tc2, chID: 2,
		later: map[*testConn]map[uint32]ua.Body{fx.tc: {}, tc2: {}}, seq: make(map[seqKey]uint32)}
}

// close shuts the server down and checks the responses written since.
func (fz *serviceFuzzer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fz.fx.s.Shutdown(ctx); err != nil {
		fz.t.Errorf("Shutdown: %v", err)
	}
	fz.drain(fz.fx.tc)
	fz.drain(fz.tc2)
}

func (fz *serviceFuzzer) byte() byte {
	if len(fz.in) == 0 {
		return 0
	}
	b := fz.in[0]
	fz.in = fz.in[1:]
	return b
}

func (fz *serviceFuzzer) u32() uint32 {
	if len(fz.in) < 4 {
		return uint32(fz.byte())
	}
	v := binary.LittleEndian.Uint32(fz.in)
	fz.in = fz.in[4:]
	return v
}

func (fz *serviceFuzzer) bytes(n int) []byte {
	n = min(n, len(fz.in))
	b := fz.in[:n]
	fz.in = fz.in[n:]
	return b
}

// count is a uint32 count: small ones, the edges and random.
func (fz *serviceFuzzer) count() uint32 {
	switch b := fz.byte(); b {
	case 0xff:
		return math.MaxUint32
	case 0xfe:
		return math.MaxUint32 - 1
	case 0xfd:
		return fz.u32()
	default:
		return uint32(b)
	}
}

// interval is a time in ms: the special values and random ones.
func (fz *serviceFuzzer) interval() float64 {
	switch b := fz.byte(); b {
	case 0:
		return 0
	case 1:
		return math.NaN()
	case 2:
		return math.Inf(1)
	case 3:
		return math.Inf(-1)
	case 4:
		return -1
	case 5:
		return math.MaxFloat64
	case 6:
		return 1e300
	case 7:
		return -math.MaxFloat64
	case 8:
		return math.SmallestNonzeroFloat64
	case 9:
		return float64(math.MaxUint32) * 1000
	case 10:
		return math.Float64frombits(uint64(fz.u32())<<32 | uint64(fz.u32()))
	default:
		return float64(b) * 2.5
	}
}

// subID is a subscription id: one created, 0 or random.
func (fz *serviceFuzzer) subID() uint32 {
	b := fz.byte()
	switch {
	case b == 0:
		return 0
	case b == 0xff:
		return fz.u32()
	case len(fz.subs) > 0:
		return fz.subs[int(b)%len(fz.subs)]
	default:
		return uint32(b)
	}
}

// itemID is a monitored item id: one created, 0 or random.
func (fz *serviceFuzzer) itemID() uint32 {
	b := fz.byte()
	switch {
	case b == 0:
		return 0
	case b == 0xff:
		return fz.u32()
	case len(fz.items) > 0:
		return fz.items[int(b)%len(fz.items)]
	default:
		return uint32(b)
	}
}

func (fz *serviceFuzzer) itemIDs() []uint32 {
	n := int(fz.byte() % 6)
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = fz.itemID()
	}
	return ids
}

func (fz *serviceFuzzer) subIDs() []uint32 {
	n := int(fz.byte() % 5)
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = fz.subID()
	}
	return ids
}

func (fz *serviceFuzzer) timestamps() ua.TimestampsToReturn {
	b := fz.byte()
	if b >= 0xf0 {
		return ua.TimestampsToReturn(int32(fz.u32()))
	}
	return ua.TimestampsToReturn(b % 6) // 4 is Invalid, 5 out of range
}

func (fz *serviceFuzzer) mode() ua.MonitoringMode {
	b := fz.byte()
	if b >= 0xf0 {
		return ua.MonitoringMode(int32(fz.u32()))
	}
	return ua.MonitoringMode(b % 4)
}

// filter is a filter of every kind, well-formed or not.
func (fz *serviceFuzzer) filter() ua.ExtensionObject {
	switch fz.byte() % 9 {
	case 0:
		return ua.ExtensionObject{}
	case 1:
		return ua.ExtensionObject{Body: &ua.DataChangeFilter{
			Trigger: ua.DataChangeTrigger(int32(fz.byte()%4) - 1 + int32(fz.byte()&0x80)<<24), DeadbandType: uint32(fz.byte() % 4), DeadbandValue: fz.interval(),
		}}
	case 2:
		return ua.ExtensionObject{Body: &ua.EventFilter{}}
	case 3:
		return ua.ExtensionObject{Body: &ua.AggregateFilter{ProcessingInterval: fz.interval()}}
	case 4:
		// A filter's type id with a body that does not decode as it.
		return ua.ExtensionObject{TypeID: (&ua.DataChangeFilter{}).BinaryEncodingID(), Encoding: ua.ExtensionObjectBinary, Raw: fz.bytes(int(fz.byte() % 24))}
	case 5:
		return ua.ExtensionObject{TypeID: ua.NewNumericNodeID(0, fz.u32()), Encoding: ua.ExtensionObjectBinary, Raw: fz.bytes(int(fz.byte() % 16))}
	case 6:
		return ua.ExtensionObject{TypeID: (&ua.DataChangeFilter{}).BinaryEncodingID(), Encoding: ua.ExtensionObjectXML, Raw: fz.bytes(int(fz.byte() % 16))}
	case 7:
		// Not a filter at all.
		return ua.ExtensionObject{Body: &ua.Range{Low: fz.interval(), High: fz.interval()}}
	default:
		return ua.ExtensionObject{TypeID: (&ua.EventFilter{}).BinaryEncodingID(), Encoding: ua.ExtensionObjectBinary, Raw: fz.bytes(int(fz.byte() % 24))}
	}
}

var fuzzNodes = []ua.NodeID{
	ua.NewStringNodeID(1, "ext"),
	ua.NewStringNodeID(1, "slow"),
	ua.NewStringNodeID(1, "static"),
	ua.NewStringNodeID(1, "ext.EURange"),
	ua.NewNumericNodeID(0, id.Server_ServerStatus_CurrentTime),
	ua.NewNumericNodeID(0, id.Server),
	ua.NewStringNodeID(1, "missing"),
}

var fuzzRanges = []string{"", "0", "1", "0:1", "1:0", "0:0", "5:9", "a", ":", "0,0", "4294967295:4294967296", "-1"}

func (fz *serviceFuzzer) readValueID() ua.ReadValueID {
	attr := uint32(ua.AttributeIDValue)
	if b := fz.byte(); b < 0x40 {
		attr = uint32(b % 28)
	} else if b == 0xff {
		attr = fz.u32()
	}
	rv := ua.ReadValueID{NodeID: fuzzNodes[int(fz.byte())%len(fuzzNodes)], AttributeID: attr}
	if b := fz.byte(); b < 0x40 {
		rv.IndexRange = fuzzRanges[int(b)%len(fuzzRanges)]
	}
	if fz.byte() == 0xff {
		rv.DataEncoding = ua.QualifiedName{Name: "Default Binary"}
	}
	return rv
}

func (fz *serviceFuzzer) params() ua.MonitoringParameters {
	return ua.MonitoringParameters{
		ClientHandle:     fz.u32(),
		SamplingInterval: fz.interval(),
		Filter:           fz.filter(),
		QueueSize:        fz.count(),
		DiscardOldest:    fz.byte()&1 == 1,
	}
}

func (fz *serviceFuzzer) variant() ua.Variant {
	switch fz.byte() % 6 {
	case 0:
		return ua.Variant{}
	case 1:
		return ua.MustVariant(fz.subID())
	case 2:
		return ua.MustVariant(int32(fz.u32()))
	case 3:
		return ua.MustVariant(fz.interval())
	case 4:
		return ua.MustVariant("x")
	default:
		return ua.MustVariant([]uint32{fz.subID(), fz.subID()})
	}
}

// run performs the operations of in.
func (fz *serviceFuzzer) run(in []byte) {
	fz.in = in
	for n := 0; len(fz.in) > 0 && n < 64; n++ {
		sel := fz.byte()
		if sel&0x80 != 0 {
			fz.raw(fuzzRawServices[int(sel&0x7f)%len(fuzzRawServices)])
		} else {
			fz.op(sel % opCount)
		}
		fz.drain(fz.fx.tc)
		fz.drain(fz.tc2)
	}
	// Let the manager publish what is due.
	fz.tick(500 * time.Millisecond)
}

// raw sends svc's request: a valid header, then the fuzzed rest.
func (fz *serviceFuzzer) raw(svc *service) {
	tc := fz.fx.tc
	body := fz.bytes(int(fz.byte()))
	tc.handle++
	h := ua.RequestHeader{RequestHandle: tc.handle, AuthenticationToken: tc.token, TimeoutHint: 1000}
	typeID := ua.NewNumericNodeID(0, svc.request)
	msg := typeID.Encode(nil)
	msg = h.Encode(msg)
	msg = append(msg, body...)
	fz.send(tc, svc.request, tc.handle, msg, nil)
}

// send hands msg (a request of the type with encoding id request and
// RequestHandle handle, req decoded, nil when it is to be decoded from
// msg) to tc and checks the answer.
func (fz *serviceFuzzer) send(tc *testConn, request, handle uint32, msg []byte, req ua.Body) ua.Body {
	if req == nil {
		// nil if it does not decode: then only the type is checked.
		req, _ = ua.DecodeMessage(ua.NewDecoder(msg))
	}
	out := tc.c.handle(msg, time.Time{})
	if out == nil {
		if req == nil {
			fz.t.Fatalf("request %d answered later, but it does not decode", request)
		}
		fz.later[tc][handle] = req
		return nil // answered later: see drain
	}
	resp, err := ua.DecodeMessage(ua.NewDecoder(out))
	if err != nil {
		fz.t.Fatalf("response to request %d does not decode: %v", request, err)
	}
	fz.check(request, resp)
	if got := responseHeader(resp).RequestHandle; got != handle {
		fz.t.Fatalf("%T echoes RequestHandle %d, want %d", resp, got, handle)
	}
	if req != nil && subtest.FaultOf(resp) == status.Good {
		fz.checkResults(req, resp)
	}
	switch r := resp.(type) {
	case *ua.CreateSubscriptionResponse:
		if r.ResponseHeader.ServiceResult == status.Good {
			fz.subs = append(fz.subs, r.SubscriptionID)
		}
	case *ua.CreateMonitoredItemsResponse:
		for _, res := range r.Results {
			if res.StatusCode == status.Good {
				fz.items = append(fz.items, res.MonitoredItemID)
			}
		}
	}
	return resp
}

// check fails unless resp is the response of request or a ServiceFault.
func (fz *serviceFuzzer) check(request uint32, resp ua.Body) {
	fz.t.Helper()
	if _, ok := resp.(*ua.ServiceFault); ok {
		return
	}
	svc := serviceByRequest(request)
	got := resp.BinaryEncodingID()
	if svc == nil || got != ua.NewNumericNodeID(0, svc.response) {
		fz.t.Fatalf("request %d answered with %T", request, resp)
	}
}

// checkResults checks a Good response against its request: one result
// per operation, revised values within the server's limits.
func (fz *serviceFuzzer) checkResults(req, resp ua.Body) {
	fz.t.Helper()
	lim := &fz.fx.s.cfg.Subscriptions
	minMS, maxMS := durMS(lim.MinPublishingInterval), durMS(lim.MaxPublishingInterval)
	count := func(what string, got, want int) {
		fz.t.Helper()
		if got != want {
			fz.t.Fatalf("%T: %d %s for %d operations", resp, got, what, want)
		}
	}
	interval := func(requested, revised float64) {
		fz.t.Helper()
		switch {
		case !(revised >= minMS && revised <= maxMS):
			fz.t.Fatalf("%T: publishing interval %g ms revised to %g, outside [%g, %g]", resp, requested, revised, minMS, maxMS)
		case requested >= maxMS && revised != maxMS:
			fz.t.Fatalf("%T: publishing interval %g ms revised to %g, want the maximum %g", resp, requested, revised, maxMS)
		}
	}
	counts := func(keepAlive, lifetime uint32) {
		fz.t.Helper()
		if keepAlive < 1 || lifetime < 3*keepAlive {
			fz.t.Fatalf("%T: revised keep-alive %d, lifetime %d", resp, keepAlive, lifetime)
		}
	}
	item := func(si float64, q uint32) {
		fz.t.Helper()
		if !(si >= minMS && si <= maxMS) || q < 1 || q > lim.MaxQueueSize {
			fz.t.Fatalf("%T: revised sampling interval %g ms, queue size %d", resp, si, q)
		}
	}
	switch r := resp.(type) {
	case *ua.CreateSubscriptionResponse:
		q := req.(*ua.CreateSubscriptionRequest)
		interval(q.RequestedPublishingInterval, r.RevisedPublishingInterval)
		counts(r.RevisedMaxKeepAliveCount, r.RevisedLifetimeCount)
	case *ua.ModifySubscriptionResponse:
		q := req.(*ua.ModifySubscriptionRequest)
		interval(q.RequestedPublishingInterval, r.RevisedPublishingInterval)
		counts(r.RevisedMaxKeepAliveCount, r.RevisedLifetimeCount)
	case *ua.SetPublishingModeResponse:
		count("results", len(r.Results), len(req.(*ua.SetPublishingModeRequest).SubscriptionIDs))
	case *ua.DeleteSubscriptionsResponse:
		count("results", len(r.Results), len(req.(*ua.DeleteSubscriptionsRequest).SubscriptionIDs))
	case *ua.TransferSubscriptionsResponse:
		count("results", len(r.Results), len(req.(*ua.TransferSubscriptionsRequest).SubscriptionIDs))
	case *ua.CreateMonitoredItemsResponse:
		count("results", len(r.Results), len(req.(*ua.CreateMonitoredItemsRequest).ItemsToCreate))
		for _, res := range r.Results {
			if res.StatusCode == status.Good {
				item(res.RevisedSamplingInterval, res.RevisedQueueSize)
			}
		}
	case *ua.ModifyMonitoredItemsResponse:
		count("results", len(r.Results), len(req.(*ua.ModifyMonitoredItemsRequest).ItemsToModify))
		for _, res := range r.Results {
			if res.StatusCode == status.Good {
				item(res.RevisedSamplingInterval, res.RevisedQueueSize)
			}
		}
	case *ua.SetMonitoringModeResponse:
		count("results", len(r.Results), len(req.(*ua.SetMonitoringModeRequest).MonitoredItemIDs))
	case *ua.SetTriggeringResponse:
		q := req.(*ua.SetTriggeringRequest)
		count("add results", len(r.AddResults), len(q.LinksToAdd))
		count("remove results", len(r.RemoveResults), len(q.LinksToRemove))
	case *ua.DeleteMonitoredItemsResponse:
		count("results", len(r.Results), len(req.(*ua.DeleteMonitoredItemsRequest).MonitoredItemIDs))
	case *ua.ReadResponse:
		count("results", len(r.Results), len(req.(*ua.ReadRequest).NodesToRead))
	}
}

// checkPublish checks a PublishResponse: no more notifications than
// MaxNotificationsPerPublish, no more available sequence numbers than
// MaxRetransmissionQueue, sequence numbers that grow: a message with data
// or a status change takes the next one, a keep-alive shows the next one.
func (fz *serviceFuzzer) checkPublish(tc *testConn, r *ua.PublishResponse) {
	fz.t.Helper()
	if r.ResponseHeader.ServiceResult != status.Good {
		return
	}
	if n := len(r.AvailableSequenceNumbers); n > fz.fx.s.cfg.Subscriptions.MaxRetransmissionQueue {
		fz.t.Fatalf("PublishResponse of subscription %d with %d available sequence numbers", r.SubscriptionID, n)
	}
	msg := &r.NotificationMessage
	k := seqKey{tc, r.SubscriptionID}
	if last := fz.seq[k]; msg.SequenceNumber <= last {
		fz.t.Fatalf("PublishResponse of subscription %d: sequence number %d after %d", r.SubscriptionID, msg.SequenceNumber, last)
	}
	if len(msg.NotificationData) > 0 {
		fz.seq[k] = msg.SequenceNumber
	}
	n := 0
	for _, eo := range r.NotificationMessage.NotificationData {
		if dcn, ok := eo.Body.(*ua.DataChangeNotification); ok {
			n += len(dcn.MonitoredItems)
		}
	}
	if n > fuzzMaxNotif {
		fz.t.Fatalf("PublishResponse of subscription %d with %d notifications, MaxNotificationsPerPublish %d",
			r.SubscriptionID, n, fuzzMaxNotif)
	}
}

// drain checks the responses written asynchronously to tc: each answers a
// request waiting for one, with its response or a ServiceFault.
func (fz *serviceFuzzer) drain(tc *testConn) { fz.drainChannel(tc, tc.c.ch.(*fakeChannel)) }

// drainChannel checks the responses written asynchronously to fc, a
// channel tc's session is or was bound to.
func (fz *serviceFuzzer) drainChannel(tc *testConn, fc *fakeChannel) {
	fc.Mu.Lock()
	out := fc.Out
	fc.Out = nil
	fc.Mu.Unlock()
	for _, msg := range out {
		resp, err := ua.DecodeMessage(ua.NewDecoder(msg))
		if err != nil {
			fz.t.Fatalf("asynchronous response does not decode: %v", err)
		}
		h := responseHeader(resp).RequestHandle
		req := fz.later[tc][h]
		if req == nil {
			fz.t.Fatalf("asynchronous %T for RequestHandle %d, not one waiting for an answer", resp, h)
		}
		delete(fz.later[tc], h)
		id := req.BinaryEncodingID()
		fz.check(id.Numeric, resp)
		switch r := resp.(type) {
		case *ua.PublishResponse:
			if n, want := len(r.Results), len(req.(*ua.PublishRequest).SubscriptionAcknowledgements); n != want {
				fz.t.Fatalf("PublishResponse with %d results for %d acknowledgements", n, want)
			}
			fz.checkPublish(tc, r)
		case *ua.CallResponse:
			if n, want := len(r.Results), len(req.(*ua.CallRequest).MethodsToCall); n != want {
				fz.t.Fatalf("CallResponse with %d results for %d methods", n, want)
			}
		}
	}
}

// call encodes req with tc's session and sends it.
func (fz *serviceFuzzer) call(tc *testConn, req ua.Body) ua.Body {
	tc.handle++
	if h := requestHeader(req); h != nil {
		h.RequestHandle = tc.handle
		h.AuthenticationToken = tc.token
		h.TimeoutHint = 1000
	}
	id := req.BinaryEncodingID()
	return fz.send(tc, id.Numeric, tc.handle, ua.AppendMessage(nil, req), req)
}

// tick runs a round of the manager d after the previous one.
func (fz *serviceFuzzer) tick(d time.Duration) {
	fz.offset += d
	now := time.Now().Add(fz.offset)
	fz.fx.s.subs.RunRound(now)
}

func (fz *serviceFuzzer) op(op byte) {
	tc := fz.fx.tc
	switch op {
	case opCreateSub:
		fz.call(tc, &ua.CreateSubscriptionRequest{
			RequestedPublishingInterval: fz.interval(), RequestedLifetimeCount: fz.count(),
			RequestedMaxKeepAliveCount: fz.count(), MaxNotificationsPerPublish: fz.count(),
			PublishingEnabled: fz.byte()&1 == 0, Priority: fz.byte(),
		})
	case opModifySub:
		fz.call(tc, &ua.ModifySubscriptionRequest{
			SubscriptionID: fz.subID(), RequestedPublishingInterval: fz.interval(), RequestedLifetimeCount: fz.count(),
			RequestedMaxKeepAliveCount: fz.count(), MaxNotificationsPerPublish: fz.count(), Priority: fz.byte(),
		})
	case opSetPublishingMode:
		fz.call(tc, &ua.SetPublishingModeRequest{PublishingEnabled: fz.byte()&1 == 1, SubscriptionIDs: fz.subIDs()})
	case opPublish:
		acks := make([]ua.SubscriptionAcknowledgement, fz.byte()%5)
		for i := range acks {
			seq := uint32(fz.byte())
			if seq == 0xff {
				seq = fz.u32()
			}
			acks[i] = ua.SubscriptionAcknowledgement{SubscriptionID: fz.subID(), SequenceNumber: seq}
		}
		target := tc
		if fz.byte()&0x80 != 0 {
			target = fz.tc2
		}
		fz.call(target, &ua.PublishRequest{SubscriptionAcknowledgements: acks})
	case opRepublish:
		seq := uint32(fz.byte())
		if seq == 0xff {
			seq = fz.u32()
		}
		fz.call(tc, &ua.RepublishRequest{SubscriptionID: fz.subID(), RetransmitSequenceNumber: seq})
	case opTransfer:
		// The other session takes subscriptions, or this one takes them
		// back.
		to := fz.tc2
		if fz.byte()&1 == 1 {
			to = tc
		}
		fz.call(to, &ua.TransferSubscriptionsRequest{SubscriptionIDs: fz.subIDs(), SendInitialValues: fz.byte()&1 == 1})
	case opDeleteSubs:
		target := tc
		if fz.byte()&0x80 != 0 {
			target = fz.tc2
		}
		fz.call(target, &ua.DeleteSubscriptionsRequest{SubscriptionIDs: fz.subIDs()})
	case opCreateItems:
		sub, ts := fz.subID(), fz.timestamps()
		items := make([]ua.MonitoredItemCreateRequest, fz.byte()%4)
		for i := range items {
			items[i] = ua.MonitoredItemCreateRequest{ItemToMonitor: fz.readValueID(), MonitoringMode: fz.mode(), RequestedParameters: fz.params()}
		}
		fz.call(tc, &ua.CreateMonitoredItemsRequest{SubscriptionID: sub, TimestampsToReturn: ts, ItemsToCreate: items})
	case opModifyItems:
		sub, ts := fz.subID(), fz.timestamps()
		items := make([]ua.MonitoredItemModifyRequest, fz.byte()%4)
		for i := range items {
			items[i] = ua.MonitoredItemModifyRequest{MonitoredItemID: fz.itemID(), RequestedParameters: fz.params()}
		}
		fz.call(tc, &ua.ModifyMonitoredItemsRequest{SubscriptionID: sub, TimestampsToReturn: ts, ItemsToModify: items})
	case opSetMonitoringMode:
		fz.call(tc, &ua.SetMonitoringModeRequest{SubscriptionID: fz.subID(), MonitoringMode: fz.mode(), MonitoredItemIDs: fz.itemIDs()})
	case opSetTriggering:
		trig := fz.itemID()
		add, remove := fz.itemIDs(), fz.itemIDs()
		if fz.byte()&1 == 1 {
			add = append(add, trig) // a self-link
		}
		fz.call(tc, &ua.SetTriggeringRequest{SubscriptionID: fz.subID(), TriggeringItemID: trig, LinksToAdd: add, LinksToRemove: remove})
	case opDeleteItems:
		fz.call(tc, &ua.DeleteMonitoredItemsRequest{SubscriptionID: fz.subID(), MonitoredItemIDs: fz.itemIDs()})
	case opCallMethods:
		calls := make([]ua.CallMethodRequest, 1+fz.byte()%2)
		for i := range calls {
			method := uint32(id.Server_GetMonitoredItems)
			if fz.byte()&1 == 1 {
				method = id.Server_ResendData
			}
			obj := ua.NewNumericNodeID(0, id.Server)
			if fz.byte() == 0xff {
				obj = ua.NewNumericNodeID(0, fz.u32())
			}
			args := make([]ua.Variant, fz.byte()%3)
			for j := range args {
				args[j] = fz.variant()
			}
			calls[i] = ua.CallMethodRequest{ObjectID: obj, MethodID: ua.NewNumericNodeID(0, method), InputArguments: args}
		}
		target := tc
		if fz.byte()&0x80 != 0 {
			target = fz.tc2
		}
		fz.call(target, &ua.CallRequest{MethodsToCall: calls})
		// A Call is answered by a goroutine of its own: let it run
		// before the next operations (and Shutdown) overtake it.
		for deadline := time.Now().Add(10 * time.Second); target.c.async.Load() > 0; runtime.Gosched() {
			if time.Now().After(deadline) {
				fz.t.Fatal("no answer to a Call within 10 s")
			}
		}
	case opSourceChanged:
		handles := make([]uint32, fz.byte()%8)
		for i := range handles {
			handles[i] = uint32(fz.byte())
			if handles[i] == 0xff {
				handles[i] = fz.u32()
			}
		}
		fz.fx.vars.Set(fz.interval())
		fz.fx.s.SourceChanged(fz.fx.src, handles)
	case opTick:
		fz.tick(time.Duration(fz.byte()) * time.Millisecond)
	case opCloseSession:
		// The second session ends, with or without its subscriptions
		// (which then live on, orphaned, until they expire or are
		// transferred), and a new one takes its place.
		fz.call(fz.tc2, &ua.CloseSessionRequest{DeleteSubscriptions: fz.byte()&1 == 1})
		fz.drain(fz.tc2)
		fz.tc2.openSession()
	case opMoveSession:
		// The second session is activated over a new channel: its
		// Publish requests queued over the old one are answered there.
		tc2 := fz.tc2
		fz.drain(tc2)
		old := tc2.c
		fz.chID++
		tc2.c = newConn(fz.fx.s, newFakeChannel(fz.chID))
		fz.call(tc2, subtest.AnonymousActivate())
		fz.drainChannel(tc2, old.ch.(*fakeChannel))
	case opRead:
		nodes := make([]ua.ReadValueID, fz.byte()%4)
		for i := range nodes {
			nodes[i] = fz.readValueID()
		}
		fz.call(tc, &ua.ReadRequest{MaxAge: fz.interval(), TimestampsToReturn: fz.timestamps(), NodesToRead: nodes})
	}
}

// TestFuzzServicesSeeds checks that the seeds reach the subscription
// paths: the prefix creates a subscription and an item, and a Publish
// then gets the item's initial value and ext's new one.
func TestFuzzServicesSeeds(t *testing.T) {
	fz := newServiceFuzzer(t)
	defer fz.close()
	fz.run(fuzzSeedPrefix())
	if len(fz.subs) != 1 || len(fz.items) != 1 {
		t.Fatalf("created subscriptions %v, items %v; want one of each", fz.subs, fz.items)
	}
	fz.tick(10 * time.Millisecond)
	tc := fz.fx.tc
	fz.call(tc, &ua.PublishRequest{})
	fz.tick(10 * time.Millisecond)
	r := subtest.WantOK[ua.PublishResponse](t, tc.async())
	if vs, _ := values(r); len(vs) != 2 || vs[0] != 0 || vs[1] != 50 {
		t.Fatalf("published %v, want [0 50]", vs)
	}
	// The second session moves to channel 3, then closes and reopens.
	tc2 := fz.tc2
	fz.run([]byte{opMoveSession})
	if id := tc2.c.ch.ID(); id != 3 {
		t.Fatalf("second session on channel %d, want 3", id)
	}
	subtest.WantOK[ua.ReadResponse](t, fz.call(tc2, &ua.ReadRequest{NodesToRead: []ua.ReadValueID{{NodeID: ua.NewStringNodeID(1, "static"), AttributeID: uint32(ua.AttributeIDValue)}}}))
	token := tc2.token
	fz.run([]byte{opCloseSession, 0})
	if tc2.token == token {
		t.Fatal("no new session after CloseSession")
	}
	subtest.WantOK[ua.ReadResponse](t, fz.call(tc2, &ua.ReadRequest{NodesToRead: []ua.ReadValueID{{NodeID: ua.NewStringNodeID(1, "static"), AttributeID: uint32(ua.AttributeIDValue)}}}))
}

// TestHugePublishingInterval: a requested publishing interval beyond what
// a time.Duration holds (1e13 ms, 1e300, +Inf) is revised to
// MaxPublishingInterval, as any other above it. Converting it to a
// Duration first gave math.MinInt64 on amd64, revised up to the
// minimum: a client asking for "as slow as possible" got the fastest
// subscription the server has.
func TestHugePublishingInterval(t *testing.T) {
	f := newSubFixture(t, Config{})
	maxMS := durMS(f.s.cfg.Subscriptions.MaxPublishingInterval)
	sub := f.createSub(10, 0, 0)
	for _, ms := range []float64{1e13, 1e300, math.MaxFloat64, math.Inf(1), maxMS, maxMS * 2} {
		r := subtest.WantOK[ua.CreateSubscriptionResponse](t, f.tc.call(&ua.CreateSubscriptionRequest{RequestedPublishingInterval: ms}))
		if r.RevisedPublishingInterval != maxMS {
			t.Errorf("CreateSubscription(%g ms): revised to %g ms, want %g", ms, r.RevisedPublishingInterval, maxMS)
		}
		f.tc.call(&ua.DeleteSubscriptionsRequest{SubscriptionIDs: []uint32{r.SubscriptionID}})
		m := subtest.WantOK[ua.ModifySubscriptionResponse](t, f.tc.call(&ua.ModifySubscriptionRequest{SubscriptionID: sub, RequestedPublishingInterval: ms}))
		if m.RevisedPublishingInterval != maxMS {
			t.Errorf("ModifySubscription(%g ms): revised to %g ms, want %g", ms, m.RevisedPublishingInterval, maxMS)
		}
	}
}

// durMS is d in milliseconds, as a Duration travels.
func durMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
