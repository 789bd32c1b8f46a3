package stack_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
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
	conf := pconfig.Simulator()
	st, err := stack.New(stack.Config{Plant: &conf, Simulator: &sim.Options{},
		Server: server.Config{Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := opcua.NewClient(st.URL, opcua.SecurityMode(gua.MessageSecurityModeNone), opcua.AutoReconnect(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	notes := make(chan *opcua.PublishNotificationData, 64)
	sub, err := peer.GopcuaSubscribe(ctx, c, &opcua.SubscriptionParameters{Interval: 50 * time.Millisecond}, notes)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Cancel(ctx)
	var sel []*gua.SimpleAttributeOperand
	for _, p := range [][]string{{"SourceName"}, {"Message"}, {"Severity"}, {"ActiveState", "Id"}, {"AckedState", "Id"}, {"Retain"}, {"LimitState", "CurrentState"}} {
		typ := uint32(id.BaseEventType)
		switch p[0] {
		case "ActiveState", "LimitState":
			typ = id.ExclusiveLimitAlarmType
		case "AckedState", "Retain":
			typ = id.AlarmConditionType
		}
		o := &gua.SimpleAttributeOperand{TypeDefinitionID: gua.NewNumericNodeID(0, typ), AttributeID: gua.AttributeIDValue}
		for _, n := range p {
			o.BrowsePath = append(o.BrowsePath, &gua.QualifiedName{Name: n})
		}
		sel = append(sel, o)
	}
	sel = append(sel, &gua.SimpleAttributeOperand{TypeDefinitionID: gua.NewNumericNodeID(0, id.ConditionType), AttributeID: gua.AttributeIDNodeID},
		&gua.SimpleAttributeOperand{TypeDefinitionID: gua.NewNumericNodeID(0, id.BaseEventType), AttributeID: gua.AttributeIDValue,
			BrowsePath: []*gua.QualifiedName{{Name: "EventId"}}})
	var first, last []byte // the EventIds of the activation and of its end
	res, err := sub.Monitor(ctx, gua.TimestampsToReturnBoth, &gua.MonitoredItemCreateRequest{
		ItemToMonitor:  &gua.ReadValueID{NodeID: gua.NewNumericNodeID(0, id.Server), AttributeID: gua.AttributeIDEventNotifier, DataEncoding: &gua.QualifiedName{}},
		MonitoringMode: gua.MonitoringModeReporting,
		RequestedParameters: &gua.MonitoringParameters{ClientHandle: 1, QueueSize: 100, DiscardOldest: true,
			Filter: gua.NewExtensionObject(&gua.EventFilter{SelectClauses: sel, WhereClause: &gua.ContentFilter{}})},
	})
	if err != nil || res.Results[0].StatusCode != gua.StatusOK {
		t.Fatalf("Monitor: %v %+v", err, res)
	}
	var got []string
	for len(got) < 2 {
		select {
		case n := <-notes:
			if n.Error != nil {
				t.Fatal(n.Error)
			}
			l, ok := n.Value.(*gua.EventNotificationList)
			if !ok {
				continue
			}
			for _, e := range l.Events {
				var s string
				for _, f := range e.EventFields[:len(e.EventFields)-1] {
					s += fmt.Sprint(f.Value(), "|")
				}
				evid, _ := e.EventFields[len(e.EventFields)-1].Value().([]byte)
				// From an activation on: the alarm may have been active
				// when the item was made, which the client then learns
				// of by its end (ConditionRefresh is to come).
				if e.EventFields[0].Value() == "sim.Sine" && (len(got) > 0 || e.EventFields[3].Value() == true) && len(got) < 2 {
					got = append(got, s)
					if len(got) == 1 {
						first = evid
					} else {
						last = evid
					}
				}
			}
		case <-ctx.Done():
			t.Fatalf("sim.Sine's alarm events within a minute (an activation and its end): %q", got)
		}
	}
	want := []string{
		"sim.Sine|&{3 en sim.Sine above 0.9}|500|true|false|true|&{3 en High}|ns=2;s=sim.Sine/Limit|",
		"sim.Sine|&{3 en sim.Sine above 0.9}|500|false|false|true|&{3 en Normal}|ns=2;s=sim.Sine/Limit|",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events\n%q\nwant\n%q", got, want)
	}

	// A ConditionRefresh brings the retained condition back between a
	// RefreshStartEvent and a RefreshEndEvent.
	r, err := c.Call(ctx, &gua.CallMethodRequest{ObjectID: gua.NewNumericNodeID(0, id.ConditionType),
		MethodID: gua.NewNumericNodeID(0, id.ConditionType_ConditionRefresh), InputArguments: []*gua.Variant{gua.MustVariant(sub.SubscriptionID)}})
	if err != nil || r.StatusCode != gua.StatusOK {
		t.Fatalf("ConditionRefresh: %v %v", err, r)
	}
	var refresh []string
	for len(refresh) == 0 || refresh[len(refresh)-1] != "Server:ConditionRefresh ends" {
		select {
		case n := <-notes:
			if l, ok := n.Value.(*gua.EventNotificationList); ok {
				for _, e := range l.Events {
					msg, _ := e.EventFields[1].Value().(*gua.LocalizedText)
					refresh = append(refresh, fmt.Sprint(e.EventFields[0].Value(), ":", msg.Text))
				}
			}
		case <-ctx.Done():
			t.Fatalf("ConditionRefresh's events: %q", refresh)
		}
	}
	if fmt.Sprint(refresh) != "[Server:ConditionRefresh starts sim.Sine:sim.Sine above 0.9 Server:ConditionRefresh ends]" {
		t.Fatalf("ConditionRefresh's events: %q", refresh)
	}

	// The inactive, unacknowledged alarm is acknowledged with the EventId
	// of its last event, then confirmed: it is retained until then. An old
	// EventId, and Disable by an operator (the anonymous session here),
	// are refused.
	call := func(method uint32, in ...any) gua.StatusCode {
		var args []*gua.Variant
		for _, x := range in {
			args = append(args, gua.MustVariant(x))
		}
		r, err := c.Call(ctx, &gua.CallMethodRequest{ObjectID: gua.NewStringNodeID(2, "sim.Sine/Limit"),
			MethodID: gua.NewNumericNodeID(0, method), InputArguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return r.StatusCode
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
			select {
			case n := <-notes:
				l, ok := n.Value.(*gua.EventNotificationList)
				if !ok {
					continue
				}
				for _, e := range l.Events {
					if e.EventFields[0].Value() == "sim.Sine" {
						ev, _ := e.EventFields[8].Value().([]byte)
						return e.EventFields[5].Value() == true, ev
					}
				}
			case <-ctx.Done():
				t.Fatalf("no event of the %s", what)
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

	// Shelving, on the condition's ShelvingState: a timed shelving of 0 or
	// more than 24 h is refused; one of a minute, then Unshelve, work; a
	// second Unshelve is Bad_ConditionNotShelved.
	shelve := func(method uint32, in ...any) gua.StatusCode {
		var args []*gua.Variant
		for _, x := range in {
			args = append(args, gua.MustVariant(x))
		}
		r, err := c.Call(ctx, &gua.CallMethodRequest{ObjectID: gua.NewStringNodeID(2, "sim.Sine/Limit/ShelvingState"),
			MethodID: gua.NewNumericNodeID(0, method), InputArguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return r.StatusCode
	}
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
		if st := shelve(c.method, c.in...); st != c.want {
			t.Errorf("method %d %v: %v, want %v", c.method, c.in, st, c.want)
		}
	}
}

// TestDeviceNotifier: a device's folder notifies its alarms' events; the
// io device's, which has no alarm, none of sim's.
func TestDeviceNotifier(t *testing.T) {
	conf := pconfig.Simulator()
	st, err := stack.New(stack.Config{Plant: &conf, Simulator: &sim.Options{},
		Server: server.Config{Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := opcua.NewClient(st.URL, opcua.SecurityMode(gua.MessageSecurityModeNone), opcua.AutoReconnect(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	notes := make(chan *opcua.PublishNotificationData, 64)
	sub, err := peer.GopcuaSubscribe(ctx, c, &opcua.SubscriptionParameters{Interval: 50 * time.Millisecond}, notes)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Cancel(ctx)
	item := func(node string, handle uint32) *gua.MonitoredItemCreateRequest {
		return &gua.MonitoredItemCreateRequest{
			ItemToMonitor:  &gua.ReadValueID{NodeID: gua.MustParseNodeID(node), AttributeID: gua.AttributeIDEventNotifier, DataEncoding: &gua.QualifiedName{}},
			MonitoringMode: gua.MonitoringModeReporting,
			RequestedParameters: &gua.MonitoringParameters{ClientHandle: handle, QueueSize: 100,
				Filter: gua.NewExtensionObject(&gua.EventFilter{SelectClauses: []*gua.SimpleAttributeOperand{{
					TypeDefinitionID: gua.NewNumericNodeID(0, id.BaseEventType), AttributeID: gua.AttributeIDValue,
					BrowsePath: []*gua.QualifiedName{{Name: "SourceName"}}}}, WhereClause: &gua.ContentFilter{}})},
		}
	}
	res, err := sub.Monitor(ctx, gua.TimestampsToReturnBoth, item("ns=2;s=sim", 1), item("ns=2;s=io", 2))
	if err != nil || res.Results[0].StatusCode != gua.StatusOK || res.Results[1].StatusCode != gua.StatusOK {
		t.Fatalf("Monitor: %v %+v", err, res)
	}
	for {
		select {
		case n := <-notes:
			l, ok := n.Value.(*gua.EventNotificationList)
			if !ok {
				continue
			}
			for _, e := range l.Events {
				if e.ClientHandle == 2 {
					t.Fatalf("the io folder notified %v", e.EventFields[0].Value())
				}
				if e.EventFields[0].Value() == "sim.Sine" {
					return
				}
			}
		case <-ctx.Done():
			t.Fatal("no sim.Sine event on the sim folder within a minute")
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
	conf := pconfig.Simulator()
	st, err := stack.New(stack.Config{Plant: &conf, Simulator: &sim.Options{},
		Server: server.Config{Logger: slog.New(slog.DiscardHandler)},
		Security: func() (*server.Security, error) {
			return &server.Security{Credentials: func() *uasc.Credentials { return creds }, AllowInsecure: true,
				CheckCertificate: func(*x509.Certificate, []*x509.Certificate) error { return nil }}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := opcua.NewClient(st.URL, opcua.SecurityMode(gua.MessageSecurityModeNone), opcua.AutoReconnect(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	notes := make(chan *opcua.PublishNotificationData, 64)
	sub, err := peer.GopcuaSubscribe(ctx, c, &opcua.SubscriptionParameters{Interval: 50 * time.Millisecond}, notes)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Cancel(ctx)
	field := func(typ uint32, path ...string) *gua.SimpleAttributeOperand {
		o := &gua.SimpleAttributeOperand{TypeDefinitionID: gua.NewNumericNodeID(0, typ), AttributeID: gua.AttributeIDValue}
		for _, p := range path {
			o.BrowsePath = append(o.BrowsePath, &gua.QualifiedName{Name: p})
		}
		return o
	}
	cond := field(id.ConditionType)
	cond.AttributeID = gua.AttributeIDNodeID
	res, err := sub.Monitor(ctx, gua.TimestampsToReturnBoth, &gua.MonitoredItemCreateRequest{
		ItemToMonitor:  &gua.ReadValueID{NodeID: gua.NewNumericNodeID(0, id.Server), AttributeID: gua.AttributeIDEventNotifier, DataEncoding: &gua.QualifiedName{}},
		MonitoringMode: gua.MonitoringModeReporting,
		RequestedParameters: &gua.MonitoringParameters{ClientHandle: 1, QueueSize: 100,
			Filter: gua.NewExtensionObject(&gua.EventFilter{SelectClauses: []*gua.SimpleAttributeOperand{
				field(id.BaseEventType, "EventType"), field(id.BaseEventType, "SourceNode"), field(id.AlarmConditionType, "ActiveState", "Id"), cond},
				WhereClause: &gua.ContentFilter{}})},
	})
	if err != nil || res.Results[0].StatusCode != gua.StatusOK {
		t.Fatalf("Monitor: %v %+v", err, res)
	}
	for {
		select {
		case n := <-notes:
			l, ok := n.Value.(*gua.EventNotificationList)
			if !ok {
				continue
			}
			for _, e := range l.Events {
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
		case <-ctx.Done():
			t.Fatal("no CertificateExpirationAlarmType event within a minute")
		}
	}
}
