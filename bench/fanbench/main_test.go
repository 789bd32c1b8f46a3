package main

import (
	"bytes"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc/config"
)

// TestMain runs the load role when TestRun starts this test binary as
// its child.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "load" {
		if err := loadMain(os.Args[2:], os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString("fanbench load: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestBenchConfig: the configuration is valid, holds 1,000 tags on 4
// devices, every register is one tag's, and the load's NodeIds name them.
func TestBenchConfig(t *testing.T) {
	c := benchConfig("127.0.0.1:502")
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	regs := map[int]string{}
	for _, d := range c.Devices {
		for _, tag := range d.Tags {
			names[d.Name+"."+tag.Name] = true
			a, _ := strconv.Atoi(strings.TrimPrefix(tag.Address, "hr:"))
			for r := a; r < a+tag.Type.Registers(0); r++ {
				if prev, ok := regs[r]; ok {
					t.Errorf("register %d of %s.%s is also %s's", r, d.Name, tag.Name, prev)
				}
				regs[r] = d.Name + "." + tag.Name
			}
		}
	}
	if len(c.Devices) != benchDevices || len(names) != benchTags {
		t.Errorf("%d devices, %d tags, want %d and %d", len(c.Devices), len(names), benchDevices, benchTags)
	}
	for g := range benchTags {
		if !names[nodeName(g)] {
			t.Errorf("the load monitors %s, not a tag", nodeName(g))
		}
	}
}

// TestPutChange: the registers of a device hold change number k in every
// tag's type, high word first, and no other device's registers change.
func TestPutChange(t *testing.T) {
	for _, k := range []uint64{1, 65537, 1<<24 + 5, 1<<32 + 7} {
		hr := make([]uint16, 4096)
		putChange(hr, 2, k)
		c := benchConfig("127.0.0.1:502")
		for i, d := range c.Devices {
			for _, tag := range d.Tags {
				a, _ := strconv.Atoi(strings.TrimPrefix(tag.Address, "hr:"))
				var bits uint64
				for r := range tag.Type.Registers(0) {
					bits = bits<<16 | uint64(hr[a+r])
				}
				var got, want uint64
				switch tag.Type {
				case config.UInt16:
					got, want = bits, k%(1<<16)
				case config.Int32:
					got, want = bits, k%(1<<32)
				case config.Float32:
					got, want = uint64(math.Float32frombits(uint32(bits))), k%(1<<24)
				case config.Float64:
					got, want = uint64(math.Float64frombits(bits)), k
				}
				if i != 2 {
					want = 0
				}
				if got != want {
					t.Fatalf("k=%d: %s.%s (%v) = %d, want %d", k, d.Name, tag.Name, tag.Type, got, want)
				}
			}
		}
	}
}

// notif returns a MonitoredItemNotification of handle h.
func notif(h uint32, v ua.Variant, st ua.StatusCode) ua.MonitoredItemNotification {
	return ua.MonitoredItemNotification{ClientHandle: h, Value: ua.DataValue{Value: v, Status: st,
		SourceTimestamp: time.Unix(1700000000, 0), ServerTimestamp: time.Unix(1700000001, 0), SourcePicoseconds: 7}}
}

// publishMsg returns the service message of a PublishResponse of
// subscription 7, as the server encodes it.
func publishMsg(seq uint32, items ...ua.MonitoredItemNotification) []byte {
	resp := &ua.PublishResponse{
		ResponseHeader:           ua.ResponseHeader{Timestamp: time.Now(), RequestHandle: 3},
		SubscriptionID:           7,
		AvailableSequenceNumbers: []uint32{seq},
		NotificationMessage:      ua.NotificationMessage{SequenceNumber: seq, PublishTime: time.Now()},
		Results:                  []ua.StatusCode{status.Good},
	}
	if items != nil {
		resp.NotificationMessage.NotificationData = []ua.ExtensionObject{{Body: &ua.DataChangeNotification{MonitoredItems: items}}}
	}
	return ua.AppendMessage(nil, resp)
}

// TestResponse: the cheap decoding of PublishResponses counts
// notifications, overflows and bad statuses, finds lost changes from the
// values of every tag type (wrapping ones included), sequence gaps (a
// keep-alive carries the next number without using it), acknowledges what
// it received, and counts a ServiceFault as an error.
func TestResponse(t *testing.T) {
	s := &session{subID: 7, items: make([]item, 4)}
	var c counts
	u16 := func(k uint64) ua.Variant { return ua.MustVariant(uint16(k)) }
	i32 := func(k uint64) ua.Variant { return ua.MustVariant(int32(uint32(k))) }
	f32 := func(k uint64) ua.Variant { return ua.MustVariant(float32(k % (1 << 24))) }
	f64 := func(k uint64) ua.Variant { return ua.MustVariant(float64(k)) }
	all := func(k uint64, st ua.StatusCode) []ua.MonitoredItemNotification {
		return []ua.MonitoredItemNotification{notif(0, u16(k), st), notif(1, i32(k), st), notif(2, f32(k), st), notif(3, f64(k), st)}
	}
	steps := []struct {
		msg  []byte
		want counts
	}{
		// The first keep-alive and the first values set the state.
		{publishMsg(1), counts{keepAlives: 1}},
		{publishMsg(1, all(65535, status.Good)...), counts{keepAlives: 1, messages: 1, notifications: 4}},
		// The next change of each, uint16 wrapping: nothing lost.
		{publishMsg(2, all(65536, status.Good)...), counts{keepAlives: 1, messages: 2, notifications: 8}},
		// Two changes of each lost, the value after them with the overflow bit.
		{publishMsg(3, all(65539, statusInfoOverflow)...), counts{keepAlives: 1, messages: 3, notifications: 12, lost: 8, overflows: 4}},
		// A keep-alive with the next number, then a message that skips one.
		{publishMsg(4), counts{keepAlives: 2, messages: 3, notifications: 12, lost: 8, overflows: 4}},
		{publishMsg(5, all(65540, status.UncertainLastUsableValue)...), counts{keepAlives: 2, messages: 4, notifications: 16, lost: 8, overflows: 4, gaps: 1, badStatus: 4}},
		// A float32 wraps at 2²⁴ (the state set below): 2²⁴-1 → 0 is one step.
		{publishMsg(6, notif(2, f32(1<<24-1), status.Good)), counts{keepAlives: 2, messages: 5, notifications: 17, lost: 8, overflows: 4, gaps: 1, badStatus: 4}},
		{publishMsg(7, notif(2, f32(1<<24), status.Good)), counts{keepAlives: 2, messages: 6, notifications: 18, lost: 8, overflows: 4, gaps: 1, badStatus: 4}},
		// A value that goes back is an error.
		{publishMsg(8, notif(3, f64(5), status.Good)), counts{keepAlives: 2, messages: 7, notifications: 19, lost: 8, overflows: 4, gaps: 1, badStatus: 4, errors: 1}},
	}
	for i, st := range steps {
		if i == 6 {
			s.items[2].last = 1<<24 - 2
		}
		s.response(st.msg, &c)
		if c != st.want {
			t.Fatalf("step %d: counts %+v, want %+v (last error %q)", i, c, st.want, s.lastErr)
		}
	}
	if len(s.acks) != 7 || s.acks[6] != (ua.SubscriptionAcknowledgement{SubscriptionID: 7, SequenceNumber: 8}) {
		t.Errorf("acknowledgements %+v, want 7, the last of 7/8", s.acks)
	}

	fault := ua.AppendMessage(nil, &ua.ServiceFault{ResponseHeader: ua.ResponseHeader{ServiceResult: status.BadTooManyPublishRequests}})
	var f counts
	s.response(fault, &f)
	if f != (counts{errors: 1}) || !strings.Contains(s.lastErr, "BadTooManyPublishRequests") {
		t.Errorf("a ServiceFault: counts %+v, last error %q", f, s.lastErr)
	}
}

// TestResponseTruncated: every truncated PublishResponse is an error,
// never a panic, and a whole one is not.
func TestResponseTruncated(t *testing.T) {
	msg := publishMsg(9, notif(0, ua.MustVariant(uint16(1)), status.Good), notif(1, ua.MustVariant(float64(2)), status.Good))
	for n := range len(msg) {
		s := &session{subID: 7, items: make([]item, 2)}
		var c counts
		s.response(msg[:n], &c)
		if c.errors == 0 {
			t.Errorf("%d of %d bytes: no error (counts %+v)", n, len(msg), c)
		}
	}
	s := &session{subID: 7, items: make([]item, 2)}
	var c counts
	s.response(msg, &c)
	if c != (counts{messages: 1, notifications: 2}) {
		t.Errorf("the whole message: counts %+v, last error %q", c, s.lastErr)
	}
}

// TestParseResult: the load's result line reads back as written.
func TestParseResult(t *testing.T) {
	r := result{notifications: 1, messages: 2, keepAlives: 3, lost: 4, overflows: 5, gaps: 6, badStatus: 7, errors: 8, cpuPct: 9.5,
		lastErr: `Publish: "x" last_error=y`}
	got, err := parseResult(r.format())
	if err != nil || got != r {
		t.Errorf("parseResult(%q) = %+v, %v; want %+v", r.format(), got, err, r)
	}
	if _, err := parseResult("reads=1"); err == nil {
		t.Error("parseResult of a foreign line: no error")
	}
}

// TestRun runs the whole bench, server and load (this test binary as its
// child), for a moment with 2 sessions of 20 items, and checks its result
// lines: the notifications arrive, no sequence gap, no overflow, no
// error, and the lost changes are counted. The queues are long (1,000
// values, 5 s of changes) so that a busy machine stalling the load does not
// overflow them. Lost changes are not asserted to be 0: the server samples
// an item from the image current when its run loop gets to it, so when the
// run loop falls behind the engine (on a busy machine) two images' changes
// of a tag make one notification, and the bench is there to count that.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and a load process")
	}
	var out bytes.Buffer
	// Under make test-arm the child is this ARM test binary: it runs under
	// the emulator named by EDGED_TEST_EXEC.
	err := benchMain([]string{"-sessions", "2", "-items", "20", "-queue", "1000", "-warmup", "200ms", "-duration", "500ms",
		"-load-prefix", os.Getenv("EDGED_TEST_EXEC")}, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, m := range regexp.MustCompile(`([a-z_/]+)[= ]([0-9.]+)`).FindAllStringSubmatch(out.String(), -1) {
		fields[m[1]] = m[2]
	}
	num := func(k string) float64 {
		v, err := strconv.ParseFloat(fields[k], 64)
		if err != nil {
			t.Fatalf("no %s in the output", k)
		}
		return v
	}
	if num("sessions") != 2 || num("items") != 20 {
		t.Errorf("sessions=%v items=%v, want 2 and 20", fields["sessions"], fields["items"])
	}
	num("lost")
	for _, k := range []string{"overflows", "sequence_gaps", "errors", "bad_status"} {
		if num(k) != 0 {
			t.Errorf("%s=%v, want 0", k, fields[k])
		}
	}
	if num("cycles") == 0 || num("messages") == 0 || num("delivered") == 0 {
		t.Errorf("cycles=%v messages=%v delivered=%v: want some of each", fields["cycles"], fields["messages"], fields["delivered"])
	}
}
