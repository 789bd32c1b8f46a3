package subs

import (
	"fmt"
	"github.com/edged/edged/opcua/server/internal/subtest"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// postChannel is a Channel whose posted responses a client goroutine
// waits for on a Go channel (a durable block inside a synctest bubble).
type postChannel struct{ out chan []byte }

func (c *postChannel) ID() uint32 { return 1 }
func (c *postChannel) PostResponse(_ uint32, msg []byte) error {
	c.out <- append([]byte(nil), msg...)
	return nil
}

// received is one PublishResponse as the client saw it.
type received struct {
	at      time.Time // when it was posted (the bubble's clock)
	publish time.Time // its PublishTime
	values  []float64
}

// TestPublishingSpacing: with the value changing at every image of the
// engine (every 5 ms, with jitter in the image's phase), a subscription's
// messages with data are at least its publishing interval apart, less at
// most one base cycle (half an interval at 5 ms) for the phase of the
// images; no value is lost or repeated, none waits longer than one
// publishing interval plus one cycle; once the value stops changing,
// keep-alives come every keep-alive count × interval. In a synctest
// bubble: the time is the bubble's, so the bounds are exact.
func TestPublishingSpacing(t *testing.T) {
	const base = testBaseCycle
	for _, interval := range []time.Duration{5 * time.Millisecond, 100 * time.Millisecond, time.Second} {
		t.Run(fmt.Sprint(interval), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checkSpacing(t, interval, base, 3, nil) })
		})
	}
	// A client that keeps one Publish request out and is late with every
	// other one: a cycle that finds no request sends when the request
	// comes, and the next cycle is an interval after that message, not
	// after the cycle that found no request.
	for _, interval := range []time.Duration{100 * time.Millisecond, time.Second} {
		late := interval * 13 / 10
		t.Run(fmt.Sprintf("%v, every other request %v late", interval, late), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checkSpacing(t, interval, base, 1, []time.Duration{late, 0}) })
		})
	}
}

// checkSpacing runs the check with the client keeping inflight Publish
// requests out, the one after the n-th answer sent delays[n % len(delays)]
// after it (none: at once).
func checkSpacing(t *testing.T, interval, base time.Duration, inflight int, delays []time.Duration) {
	delay := time.Duration(0)
	for _, d := range delays {
		delay = max(delay, d)
	}
	const keepAlive = 3
	changing := 40 * interval // how long the value changes
	if changing < 4*time.Second {
		changing = 4 * time.Second
	}
	f := newSubFixture(t, Config{})
	s, vars := f.s, f.vars
	sub := f.createSub(float64(interval/time.Millisecond), keepAlive, 1000)
	queue := uint32(2*interval/base + 10) // every value of an interval fits
	if r := f.createItems(sub, item("ext", ua.AttributeIDValue, float64(base/time.Millisecond), queue, nil)); r[0].StatusCode != status.Good {
		t.Fatal(r[0].StatusCode)
	}

	// The engine's images: every base cycle, the value one more, at a
	// phase of 1.3 ms plus a jitter of up to 0.9 ms.
	produced := map[float64]time.Time{}
	stop := make(chan struct{})
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		v := 0.0
		for k := 1; ; k++ {
			at := start.Add(time.Duration(k)*base + 1300*time.Microsecond + time.Duration(k*7919%10)*90*time.Microsecond)
			time.Sleep(time.Until(at))
			if time.Since(start) < changing {
				v++
				vars.Set(v)
				produced[v] = time.Now()
			}
			select {
			case <-stop:
				return
			default:
			}
			s.SourceChanged(vars.Src, []uint32{1})
		}
	}()

	// The client: three Publish requests outstanding, each answered one
	// sent again at once, every message acknowledged.
	ch := &postChannel{out: make(chan []byte, 16)} // the session's channel, 1
	tc := &testConn{t: t, c: newConn(s, ch), token: f.tc.token}
	for range inflight {
		if r := tc.sendPublish(); r != nil {
			t.Fatalf("Publish answered at once: %v", subtest.FaultOf(r))
		}
	}
	var got []received
	end := start.Add(changing + 12*keepAlive*interval)
	for time.Now().Before(end) {
		var msg []byte
		select {
		case msg = <-ch.out:
		case <-time.After(time.Until(end)):
			continue
		}
		r := subtest.WantOK[ua.PublishResponse](t, mustDecode(t, msg))
		vs, _ := values(r)
		got = append(got, received{at: time.Now(), publish: r.NotificationMessage.PublishTime, values: vs})
		var acks []ua.SubscriptionAcknowledgement
		if len(r.NotificationMessage.NotificationData) > 0 {
			acks = append(acks, ua.SubscriptionAcknowledgement{SubscriptionID: r.SubscriptionID, SequenceNumber: r.NotificationMessage.SequenceNumber})
		}
		if len(delays) > 0 {
			time.Sleep(delays[len(got)%len(delays)])
		}
		if r := tc.sendPublish(acks...); r != nil {
			t.Fatalf("Publish answered at once: %v", subtest.FaultOf(r))
		}
	}
	close(stop)
	<-done

	// Spacing of the messages with data, after the first (the initial
	// value, sent at the first cycle).
	slack := min(interval/2, base)
	var data []received
	for _, r := range got {
		if len(r.values) > 0 {
			data = append(data, r)
		}
	}
	if len(data) < 10 {
		t.Fatalf("%d messages with data", len(data))
	}
	var gaps []time.Duration
	for i := 2; i < len(data); i++ {
		gap := data[i].publish.Sub(data[i-1].publish)
		gaps = append(gaps, gap)
		if gap < interval-slack {
			t.Errorf("messages %d and %d with data %v apart, want at least %v (interval %v less %v)", i-1, i, gap, interval-slack, interval, slack)
		}
		if !data[i].at.Equal(data[i].publish) {
			t.Errorf("message %d posted at %v, PublishTime %v", i, data[i].at.Sub(start), data[i].publish.Sub(start))
		}
	}
	slices.Sort(gaps)
	med := gaps[len(gaps)/2]
	if d := med - interval; delay == 0 && (d < -interval/50 || d > interval/50) {
		t.Errorf("median spacing %v, want %v within 2 %%", med, interval)
	}
	t.Logf("%d messages with data; spacing min %v, median %v, max %v", len(data), gaps[0], med, gaps[len(gaps)-1])

	// Every value once, in order, each within one interval and one cycle
	// of the image that made it.
	var seen []float64
	var worst time.Duration
	for _, r := range data {
		for _, v := range r.values {
			seen = append(seen, v)
			if p, ok := produced[v]; ok {
				lat := r.at.Sub(p)
				worst = max(worst, lat)
				if lat > interval+base+delay {
					t.Errorf("value %v made at %v reached the client at %v: %v late, more than %v", v, p.Sub(start), r.at.Sub(start), lat, interval+base+delay)
				}
			}
		}
	}
	last := float64(len(produced))
	want := seen[0]
	for _, v := range seen {
		if v != want {
			t.Fatalf("values %v ... : %v where %v was due (lost or repeated)", seen[:min(len(seen), 10)], v, want)
		}
		want++
	}
	if seen[len(seen)-1] != last {
		t.Errorf("the last value received is %v, the last made %v", seen[len(seen)-1], last)
	}
	t.Logf("latency max %v", worst)

	// Keep-alives once the value stops changing: every keepAlive
	// intervals, to the cycle.
	var kas []time.Time
	for _, r := range got {
		if len(r.values) == 0 && r.publish.After(data[len(data)-1].publish) {
			kas = append(kas, r.publish)
		}
	}
	if len(kas) < 5 {
		t.Fatalf("%d keep-alives after the last data message", len(kas))
	}
	for i := 1; i < len(kas); i++ {
		if gap := kas[i].Sub(kas[i-1]); gap < keepAlive*interval-slack || gap > keepAlive*interval+base {
			t.Errorf("keep-alives %d and %d %v apart, want %v", i-1, i, gap, keepAlive*interval)
		}
	}
}
