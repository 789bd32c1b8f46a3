package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/mqtt"
	"github.com/edged/edged/sparkplug"
)

// consumeMain is the consumer role: it subscribes to spBv1.0/# on the
// broker, decodes every message, and from "mark" on counts the DATA
// metrics, their bytes (the whole MQTT PUBLISH) and the latency of the
// live ones: from the metric's timestamp (when the driver read the value)
// and from the message's (when the scan published the image), both of 1
// ms resolution, so up to 1 ms more than the truth; at the end of its
// input it prints its figures as key=value lines.
func consumeMain(args []string, in io.Reader, out io.Writer) error {
	if len(args) != 1 {
		return errors.New("consume: want the broker's URL")
	}
	tl := newTally()
	sub, err := subscribe(args[0], tl.message)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "ready")
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if sc.Text() == "mark" {
			tl.start()
		}
	}
	time.Sleep(100 * time.Millisecond) // what is in flight
	sub.close()
	return tl.report(out)
}

// tally is what the consumer counted since "mark".
type tally struct {
	mu        sync.Mutex
	counting  bool
	metrics   int
	hist      int
	bytes     int
	lat       []time.Duration
	msgLat    []time.Duration
	bigLat    []time.Duration // of the messages of 100 metrics or more, from the image
	lastSeq   int
	seqGaps   int
	decodeErr error
}

// newTally has room for a 30 s window's figures, so that growing them
// does not stall the consumer in the middle of a measurement.
func newTally() *tally {
	return &tally{lat: make([]time.Duration, 0, 1<<20), msgLat: make([]time.Duration, 0, 1<<16),
		bigLat: make([]time.Duration, 0, 1<<12), lastSeq: -1}
}

// start begins counting.
func (tl *tally) start() {
	tl.mu.Lock()
	tl.counting, tl.metrics, tl.hist, tl.bytes, tl.seqGaps = true, 0, 0, 0, 0
	tl.lat, tl.msgLat, tl.bigLat = tl.lat[:0], tl.msgLat[:0], tl.bigLat[:0]
	tl.mu.Unlock()
}

// message takes one message from the broker.
func (tl *tally) message(topic string, payload []byte) {
	now := time.Now()
	t, ok := sparkplug.ParseTopic(topic)
	if !ok {
		return
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	data := tl.counting && t.Type == sparkplug.DDATA
	n := 0
	h, err := sparkplug.Decode(payload, func(m *sparkplug.Metric) error {
		n++
		switch {
		case !data:
		case m.Historical:
			tl.hist++
		default:
			tl.metrics++
			tl.lat = append(tl.lat, now.Sub(time.UnixMilli(int64(m.Timestamp))))
		}
		return nil
	})
	if err != nil && tl.decodeErr == nil {
		tl.decodeErr = fmt.Errorf("%s: %w", topic, err)
	}
	if data && err == nil {
		d := now.Sub(time.UnixMilli(int64(h.Timestamp)))
		tl.msgLat = append(tl.msgLat, d)
		if n >= 100 {
			tl.bigLat = append(tl.bigLat, d)
		}
	}
	if h.HasSeq {
		if t.Type == sparkplug.NBIRTH {
			tl.lastSeq = -1
		}
		if tl.lastSeq >= 0 && int(h.Seq) != (tl.lastSeq+1)%256 {
			tl.seqGaps++
		}
		tl.lastSeq = int(h.Seq)
	}
	if data {
		tl.bytes += 3 + len(topic) + len(payload) + remainingLen(2+len(topic)+len(payload)) // header byte, length, topic, payload
	}
}

// report prints the figures as key=value lines.
func (tl *tally) report(out io.Writer) error {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.decodeErr != nil {
		return tl.decodeErr
	}
	fmt.Fprintf(out, "metrics=%d\nhistorical=%d\nseq_gaps=%d\n", tl.metrics, tl.hist, tl.seqGaps)
	if tl.metrics > 0 {
		fmt.Fprintf(out, "bytes_per_metric=%.1f\n", float64(tl.bytes)/float64(tl.metrics+tl.hist))
	}
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	fmt.Fprintf(out, "p50=%v\np99=%v\nmax=%v\n", r(kit.Percentile(tl.lat, 50)), r(kit.Percentile(tl.lat, 99)), r(kit.Percentile(tl.lat, 100)))
	fmt.Fprintf(out, "msg_p50=%v\nmsg_p99=%v\nmsg_max=%v\n", r(kit.Percentile(tl.msgLat, 50)), r(kit.Percentile(tl.msgLat, 99)), r(kit.Percentile(tl.msgLat, 100)))
	fmt.Fprintf(out, "big=%d\nbig_p50=%v\nbig_max=%v\n", len(tl.bigLat), r(kit.Percentile(tl.bigLat, 50)), r(kit.Percentile(tl.bigLat, 100)))
	return nil
}

// subscription is a subscription to spBv1.0/#, made again when the broker
// comes back after an outage.
type subscription struct {
	mu   sync.Mutex
	c    *mqtt.Conn
	quit chan struct{}
}

func subscribe(url string, handler func(topic string, payload []byte)) (*subscription, error) {
	connect := func() (*mqtt.Conn, error) {
		c, err := mqtt.Dial(context.Background(), url, mqtt.Options{ClientID: "sparkbench-consumer", KeepAlive: 30 * time.Second, Handler: handler})
		if err != nil {
			return nil, err
		}
		if err := c.Subscribe(context.Background(), 0, "spBv1.0/#"); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
	c, err := connect()
	if err != nil {
		return nil, err
	}
	s := &subscription{c: c, quit: make(chan struct{})}
	go s.keep(connect)
	return s, nil
}

// keep connects again, every 50 ms until it succeeds, whenever the
// connection ends, until close.
func (s *subscription) keep(connect func() (*mqtt.Conn, error)) {
	for {
		s.mu.Lock()
		done := s.c.Done()
		s.mu.Unlock()
		select {
		case <-s.quit:
			return
		case <-done:
		}
		for {
			c, err := connect()
			if err == nil {
				s.mu.Lock()
				s.c = c
				s.mu.Unlock()
				break
			}
			select {
			case <-s.quit:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

func (s *subscription) close() {
	close(s.quit)
	s.mu.Lock()
	s.c.Close()
	s.mu.Unlock()
}

// remainingLen is the size of an MQTT remaining length of n.
func remainingLen(n int) int {
	switch {
	case n < 128:
		return 1
	case n < 16384:
		return 2
	case n < 2097152:
		return 3
	}
	return 4
}
