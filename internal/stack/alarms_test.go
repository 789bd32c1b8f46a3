package stack_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"

	"github.com/edged/edged/internal/stack"
	"github.com/edged/edged/internal/testutil/peer"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/uasc"
	pconfig "github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/sim"
)

// TestSimulatorAlarm: the simulator's High limit alarm on sim.Sine (0.9;
// the sine's period is 10 s) reaches a client subscribed to the Server
// object's events: active, unacknowledged, retained, then inactive; the
// client acknowledges it by calling Acknowledge on its condition.
func TestSimulatorAlarm(t *testing.T) {
	ctx, c, sub, notes := eventClient(t, nil)
	var sel []*gua.SimpleAttributeOperand
	for _, p := range [][]string{{"SourceName"}, {"Message"}, {"Severity"}, {"ActiveState", "Id"}, {"AckedState", "Id"}, {"Retain"}, {"LimitState", "CurrentState"}} {
		typ := uint32(id.BaseEventType)
		switch p[0] {
		case "ActiveState", "LimitState":
			typ = id.ExclusiveLimitAlarmType
		case "AckedState", "Retain":
			typ = id.AlarmConditionType
		}
		sel = append(sel, peer.GopcuaField(typ, p...))
	}
	sel = append(sel, peer.GopcuaConditionID(), peer.GopcuaField(id.BaseEventType, "EventId"))
	var first, last []byte // the EventIds of the activation and of its end
	res, err := sub.Monitor(ctx, gua.TimestampsToReturnBoth, peer.GopcuaEventItem(gua.NewNumericNodeID(0, id.Server), 1, 100, sel, nil))
	if err != nil || res.Results[0].StatusCode != gua.StatusOK {
		t.Fatalf("Monitor: %v %+v", err, res)
	}
	var got []string
	for len(got) < 2 {
		evs, err := peer.GopcuaNextEvents(ctx, notes)
		if err != nil {
			t.Fatalf("sim.Sine's alarm events within a minute (an activation and its end): %q: %v", got, err)
		}
		for _, e := range evs {
			var s string
			for _, f := range e.EventFields[:len(e.EventFields)-1] {
				s += fmt.Sprint(f.Value(), "|")
			}
			evid, _ := e.EventFields[len(e.EventFields)-1].Value().([]byte)
			// From an activation on: the alarm may have been active when
			// the item was made, which the client then learns of by its
			// end (ConditionRefresh is to come).
			if e.EventFields[0].Value() == "sim.Sine" && (len(got) > 0 || e.EventFields[3].Value() == true) && len(got) < 2 {
				got = append(got, s)
				if len(got) == 1 {
					first = evid
				} else {
					last = evid
				}
			}
		}
	}
	want := []string{
		"sim.Sine|&{3 en sim.Sine above 0.9}|500|true|false|true|&{3 en High}|ns=2;s=sim.Sine/Limit|",
		"sim.Sine|&{3 en sim.Sine above 0.9}|500|false|false|true|&{3 en Normal}|ns=2;s=sim.Sine/Limit|",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events\n%q\nwant\n%q", got, want)
	}

	checkRefresh(t, ctx, c, sub, notes)

	// The inactive, unacknowledged alarm is acknowledged with the EventId
	// of its last event, then confirmed: it is retained until then. An old
	// EventId, and Disable by an operator (the anonymous session here),
	// are refused.
	call := func(method uint32, in ...any) gua.StatusCode {
		return callOn(t, ctx, c, "sim.Sine/Limit", method, in...)
	}
	comment := &gua.LocalizedText{EncodingMask: gua.LocalizedTextText, Text: "seen"}
	if st := call(id.AcknowledgeableConditionType_Acknowledge, first, comment); st != gua.StatusBadEventIDUnknown {
		t.Fatalf("Acknowledge with the activation's EventId: %v", st)
	}
	if st := call(id.AcknowledgeableConditionType_Acknowledge, last, comment); st != gua.StatusOK {
		t.Fatalf("Acknowledge: %v", st)
	}
	if st := call(id.ConditionType_Disable); st != gua.StatusBadUserAccessDenied {
		t.Fatalf("Disable by an operator: %v", st)
	}
	// next waits for sim.Sine's next event and returns its Retain and
	// EventId.
	next := func(what string) (bool, []byte) {
		for {
			evs, err := peer.GopcuaNextEvents(ctx, notes)
			if err != nil {
				t.Fatalf("no event of the %s: %v", what, err)
			}
			for _, e := range evs {
				if e.EventFields[0].Value() == "sim.Sine" {
					ev, _ := e.EventFields[8].Value().([]byte)
					return e.EventFields[5].Value() == true, ev
				}
			}
		}
	}
	retained, ackEvent := next("acknowledgement")
	if !retained {
		t.Fatal("acknowledged, not confirmed, yet not retained")
	}
	if st := call(id.AcknowledgeableConditionType_Confirm, ackEvent, comment); st != gua.StatusOK {
		t.Fatalf("Confirm: %v", st)
	}
	if retained, _ := next("confirmation"); retained {
		t.Fatal("inactive, acknowledged and confirmed, yet retained")
	}

	checkShelving(t, ctx, c)
}

// checkRefresh calls ConditionRefresh for sub: sim.Sine's retained
// condition comes back between a RefreshStartEvent and a RefreshEndEvent.
func checkRefresh(t *testing.T, ctx context.Context, c *opcua.Client, sub *opcua.Subscription, notes chan *opcua.PublishNotificationData) {
	t.Helper()
	if err := peer.GopcuaConditionRefresh(ctx, c, sub.SubscriptionID); err != nil {
		t.Fatalf("ConditionRefresh: %v", err)
	}
	var refresh []string
	for len(refresh) == 0 || refresh[len(refresh)-1] != "Server:ConditionRefresh ends" {
		evs, err := peer.GopcuaNextEvents(ctx, notes)
		if err != nil {
			t.Fatalf("ConditionRefresh's events: %q: %v", refresh, err)
		}
		for _, e := range evs {
			msg, _ := e.EventFields[1].Value().(*gua.LocalizedText)
			if src := e.EventFields[0].Value(); src != "sim.Sine" && !strings.HasPrefix(msg.Text, "ConditionRefresh") {
				// The gateway's own conditions (a scan overrunning on
				// a loaded, emulated machine) are not this test's.
				continue
			}
			refresh = append(refresh, fmt.Sprint(e.EventFields[0].Value(), ":", msg.Text))
		}
	}
	if fmt.Sprint(refresh) != "[Server:ConditionRefresh starts sim.Sine:sim.Sine above 0.9 Server:ConditionRefresh ends]" {
		t.Fatalf("ConditionRefresh's events: %q", refresh)
	}
}

// checkShelving shelves sim.Sine's condition through its ShelvingState:
// a timed shelving of 0 or more than 24 h is refused; one of a minute,
// then Unshelve, work; a second Unshelve is Bad_ConditionNotShelved.
func checkShelving(t *testing.T, ctx context.Context, cl *opcua.Client) {
	t.Helper()
	for _, c := range []struct {
		method uint32
		in     []any
		want   gua.StatusCode
	}{
		{id.AlarmConditionType_ShelvingState_TimedShelve, []any{0.0}, gua.StatusBadShelvingTimeOutOfRange},
		{id.AlarmConditionType_ShelvingState_TimedShelve, []any{25 * 3600e3}, gua.StatusBadShelvingTimeOutOfRange},
		{id.AlarmConditionType_ShelvingState_TimedShelve, []any{60e3}, gua.StatusOK},
		{id.AlarmConditionType_ShelvingState_Unshelve, nil, gua.StatusOK},
		{id.AlarmConditionType_ShelvingState_Unshelve, nil, gua.StatusBadConditionNotShelved},
		{id.AlarmConditionType_ShelvingState_OneShotShelve, nil, gua.StatusOK},
	} {
		if st := callOn(t, ctx, cl, "sim.Sine/Limit/ShelvingState", c.method, c.in...); st != c.want {
			t.Errorf("method %d %v: %v, want %v", c.method, c.in, st, c.want)
		}
	}
}

// callOn calls method of object (a string NodeId of namespace 2) with in
// and returns its status.
func callOn(t *testing.T, ctx context.Context, c *opcua.Client, object string, method uint32, in ...any) gua.StatusCode {
	t.Helper()
	var args []*gua.Variant
	for _, x := range in {
		args = append(args, gua.MustVariant(x))
	}
	r, err := c.Call(ctx, &gua.CallMethodRequest{ObjectID: gua.NewStringNodeID(2, object),
		MethodID: gua.NewNumericNodeID(0, method), InputArguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return r.StatusCode
}

// TestDeviceNotifier: a device's folder notifies its alarms' events; the
// io device's, which has no alarm, none of sim's.
func TestDeviceNotifier(t *testing.T) {
	ctx, _, sub, notes := eventClient(t, nil)
	item := func(node string, handle uint32) *gua.MonitoredItemCreateRequest {
		return peer.GopcuaEventItem(gua.MustParseNodeID(node), handle, 100, []*gua.SimpleAttributeOperand{peer.GopcuaField(id.BaseEventType, "SourceName")}, nil)
	}
	res, err := sub.Monitor(ctx, gua.TimestampsToReturnBoth, item("ns=2;s=sim", 1), item("ns=2;s=io", 2))
	if err != nil || res.Results[0].StatusCode != gua.StatusOK || res.Results[1].StatusCode != gua.StatusOK {
		t.Fatalf("Monitor: %v %+v", err, res)
	}
	for {
		evs, err := peer.GopcuaNextEvents(ctx, notes)
		if err != nil {
			t.Fatalf("no sim.Sine event on the sim folder within a minute: %v", err)
		}
		for _, e := range evs {
			if e.ClientHandle == 2 {
				t.Fatalf("the io folder notified %v", e.EventFields[0].Value())
			}
			if e.EventFields[0].Value() == "sim.Sine" {
				return
			}
		}
	}
}

// TestCertificateExpiration: a server certificate that ends within 30
// days makes the system condition CertificateExpiration active within a
// second: a CertificateExpirationAlarmType event of the Server object,
// ConditionId ns=2;s=Server/CertificateExpiration, that gopcua receives.
func TestCertificateExpiration(t *testing.T) {
	der, key, err := pki.NewCertificate(pki.Template{ApplicationURI: server.DefaultApplicationURI, CommonName: "edged", Validity: 5 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	creds, err := uasc.NewCredentials(der, key)
	if err != nil {
		t.Fatal(err)
	}
	ctx, _, sub, notes := eventClient(t, func() (*server.Security, error) {
		return &server.Security{Credentials: func() *uasc.Credentials { return creds }, AllowInsecure: true,
			CheckCertificate: func(*x509.Certificate, []*x509.Certificate) error { return nil }}, nil
	})
	field := peer.GopcuaField
	res, err := sub.Monitor(ctx, gua.TimestampsToReturnBoth, peer.GopcuaEventItem(gua.NewNumericNodeID(0, id.Server), 1, 100,
		[]*gua.SimpleAttributeOperand{field(id.BaseEventType, "EventType"), field(id.BaseEventType, "SourceNode"),
			field(id.AlarmConditionType, "ActiveState", "Id"), peer.GopcuaConditionID()}, nil))
	if err != nil || res.Results[0].StatusCode != gua.StatusOK {
		t.Fatalf("Monitor: %v %+v", err, res)
	}
	for {
		evs, err := peer.GopcuaNextEvents(ctx, notes)
		if err != nil {
			t.Fatalf("no CertificateExpirationAlarmType event within a minute: %v", err)
		}
		for _, e := range evs {
			f := e.EventFields
			typ, _ := f[0].Value().(*gua.NodeID)
			src, _ := f[1].Value().(*gua.NodeID)
			cid, _ := f[3].Value().(*gua.NodeID)
			if typ == nil || typ.IntID() != id.CertificateExpirationAlarmType {
				continue
			}
			if src == nil || src.IntID() != id.Server || f[2].Value() != true || cid == nil || cid.String() != "ns=2;s=Server/CertificateExpiration" {
				t.Fatalf("the certificate's condition: source %v, active %v, ConditionId %v", src, f[2].Value(), cid)
			}
			return
		}
	}
}

// eventClient starts the simulator's stack (with security, nil: the
// default) and connects gopcua to it without security, with a
// subscription publishing every 50 ms into notes; all of it ends with the
// test, within a minute.
func eventClient(t *testing.T, security func() (*server.Security, error)) (context.Context, *opcua.Client, *opcua.Subscription, chan *opcua.PublishNotificationData) {
	t.Helper()
	conf := pconfig.Simulator()
	st, err := stack.New(stack.Config{Plant: &conf, Simulator: &sim.Options{},
		Server: server.Config{Logger: slog.New(slog.DiscardHandler)}, Security: security})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	c, err := opcua.NewClient(st.URL, opcua.SecurityMode(gua.MessageSecurityModeNone), opcua.AutoReconnect(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	notes := make(chan *opcua.PublishNotificationData, 64)
	sub, err := peer.GopcuaSubscribe(ctx, c, &opcua.SubscriptionParameters{Interval: 50 * time.Millisecond}, notes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Cancel(ctx) })
	return ctx, c, sub, notes
}
