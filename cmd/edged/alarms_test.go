package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"testing"
	"time"

	gua "github.com/gopcua/opcua/ua"
)

// TestAlarmOpen62541: open62541's client subscribes to the Server
// object's events with a where clause (OfType AlarmConditionType and
// Severity >= 100) and a UaExpert-like select clause, receives sim.Sine's
// alarm (an ExclusiveLimitAlarmType, severity 500, its ConditionId) as it
// becomes active and ends, and acknowledges it through Call: a stale
// EventId is Bad_EventIdUnknown, the last one Good, and an event then says
// it is acknowledged.
func TestAlarmOpen62541(t *testing.T) {
	client := open62541Client(t)
	ctx, _, out, _ := startRun(t, "--listen", "127.0.0.1:0")
	m := waitFor(t, out, endpointLine)
	waitFor(t, out, regexp.MustCompile(`alarms, as events of the Server object: .*sim\.Sine/Limit`))
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, client, m[1], "alarm")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("open62541 client: %v\n%s\n%s", err, stdout, stderr.String())
	}
	var active, ended bool
	acks := map[string]gua.StatusCode{}
	acked := false
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		if !bytes.HasPrefix(sc.Bytes(), []byte("{")) {
			continue // the library's log
		}
		var l struct {
			Ev, Which, Type, Condition, Message string
			Status                              uint32
			Severity, Active, Acked, Events     int
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		switch l.Ev {
		case "error":
			t.Fatalf("open62541: %s", l.Message)
		case "monitor":
			if l.Status != 0 {
				t.Fatalf("CreateMonitoredItems: %v", gua.StatusCode(l.Status))
			}
		case "event":
			if l.Type != "i=9341" || l.Severity != 500 || l.Condition != "ns=2;s=sim.Sine/Limit" {
				t.Errorf("event %s", sc.Bytes())
			}
			if l.Active == 1 {
				active = true
			} else if active {
				ended = true
			}
		case "ack":
			acks[l.Which] = gua.StatusCode(l.Status)
		case "acked":
			acked = l.Acked == 1
			t.Logf("open62541: %d events of sim.Sine's alarm", l.Events)
		}
	}
	if !active || !ended {
		t.Fatalf("the alarm: active %v, ended %v", active, ended)
	}
	if acks["stale"] != gua.StatusBadEventIDUnknown || acks["last"] != gua.StatusOK {
		t.Fatalf("Acknowledge: stale EventId %v, last %v", acks["stale"], acks["last"])
	}
	if !acked {
		t.Fatal("no event said the alarm was acknowledged")
	}
}

// TestAlarmsNodeOPCUA: node-opcua's client alarm list (installAlarmMonitoring:
// the fields of AlarmConditionType browsed from the server, a
// ConditionRefresh) shows sim.Sine's alarm active, then inactive and
// unacknowledged; its acknowledge() works and the next event says so; a
// ConditionRefresh brings the retained alarm again; confirm() works.
func TestAlarmsNodeOPCUA(t *testing.T) {
	node := nodeOPCUAClient(t)
	ctx, _, out, _ := startRun(t, "--listen", "127.0.0.1:0")
	m := waitFor(t, out, endpointLine)
	waitFor(t, out, regexp.MustCompile(`alarms, as events of the Server object: .*sim\.Sine/Limit`))
	r := runNodeClient(t, ctx, node, m[1], "alarms")
	r.scenario(t, "alarms")
	type alarmState struct {
		Active, Acked, Retain bool
		Severity              int
		Source, EventType     string
	}
	var active, inactive, acked alarmState
	r.get(t, "alarms", "active", 0, &active)
	r.get(t, "alarms", "inactive", 0, &inactive)
	r.get(t, "alarms", "acked", 0, &acked)
	want := alarmState{Active: true, Retain: true, Severity: 500, Source: "sim.Sine", EventType: "ns=0;i=9341"}
	if active != want {
		t.Errorf("active: %+v, want %+v", active, want)
	}
	want.Active = false
	if inactive != want {
		t.Errorf("inactive: %+v, want %+v", inactive, want)
	}
	want.Acked = true
	if acked != want {
		t.Errorf("acknowledged: %+v, want %+v (retained until confirmed)", acked, want)
	}
	var ack, confirm nodeStatus
	r.get(t, "alarms", "ack", 0, &ack)
	r.get(t, "alarms", "confirm", 0, &confirm)
	if !ack.is(gua.StatusOK) || !confirm.is(gua.StatusOK) {
		t.Errorf("acknowledge %s, confirm %s", ack.Status, confirm.Status)
	}
	var refresh struct{ Updates, Alarms int }
	r.get(t, "alarms", "refresh", 0, &refresh)
	if refresh.Updates < 1 {
		t.Errorf("ConditionRefresh: %+v", refresh)
	}
}
