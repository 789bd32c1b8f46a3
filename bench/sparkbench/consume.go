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
	var (
		mu       sync.Mutex
		counting bool
		metrics  int
		hist     int
		bytes    int
		// Room for a 30 s window's figures, so that growing them does not
		// stall the consumer in the middle of a measurement.
		lat       = make([]time.Duration, 0, 1<<20)
		msgLat    = make([]time.Duration, 0, 1<<16)
		bigLat    = make([]time.Duration, 0, 1<<12) // of the messages of 100 metrics or more, from the image
		lastSeq   = -1
		seqGaps   int
		decodeErr error
	)
	handler := func(topic string, payload []byte) {
		now := time.Now()
		t, ok := sparkplug.ParseTopic(topic)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		n := 0
		h, err := sparkplug.Decode(payload, func(m *sparkplug.Metric) error {
			n++
			if !counting || t.Type != sparkplug.DDATA {
				return nil
			}
			if m.Historical {
				hist++
				return nil
			}
			metrics++
			lat = append(lat, now.Sub(time.UnixMilli(int64(m.Timestamp))))
			return nil
		})
		if err != nil && decodeErr == nil {
			decodeErr = fmt.Errorf("%s: %w", topic, err)
		}
		if counting && t.Type == sparkplug.DDATA && err == nil {
			msgLat = append(msgLat, now.Sub(time.UnixMilli(int64(h.Timestamp))))
			if n >= 100 {
				bigLat = append(bigLat, now.Sub(time.UnixMilli(int64(h.Timestamp))))
			}
		}
		if h.HasSeq {
			if t.Type == sparkplug.NBIRTH {
				lastSeq = -1
			}
			if lastSeq >= 0 && int(h.Seq) != (lastSeq+1)%256 {
				seqGaps++
			}
			lastSeq = int(h.Seq)
		}
		if counting && t.Type == sparkplug.DDATA {
			bytes += 3 + len(topic) + len(payload) + remainingLen(2+len(topic)+len(payload)) // header byte, length, topic, payload
		}
	}
	// The connection, made again when the broker comes back.
	connect := func() (*mqtt.Conn, error) {
		c, err := mqtt.Dial(context.Background(), args[0], mqtt.Options{ClientID: "sparkbench-consumer", KeepAlive: 30 * time.Second, Handler: handler})
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
		return err
	}
	var cmu sync.Mutex
	quit := make(chan struct{})
	go func() {
		for {
			cmu.Lock()
			done := c.Done()
			cmu.Unlock()
			select {
			case <-quit:
				return
			case <-done:
			}
			for {
				nc, err := connect()
				if err == nil {
					cmu.Lock()
					c = nc
					cmu.Unlock()
					break
				}
				select {
				case <-quit:
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
	}()
	fmt.Fprintln(out, "ready")
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if sc.Text() == "mark" {
			mu.Lock()
			counting, metrics, hist, bytes, lat, msgLat, bigLat, seqGaps = true, 0, 0, 0, lat[:0], msgLat[:0], bigLat[:0], 0
			mu.Unlock()
		}
	}
	time.Sleep(100 * time.Millisecond) // what is in flight
	close(quit)
	cmu.Lock()
	c.Close()
	cmu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if decodeErr != nil {
		return decodeErr
	}
	fmt.Fprintf(out, "metrics=%d\nhistorical=%d\nseq_gaps=%d\n", metrics, hist, seqGaps)
	if metrics > 0 {
		fmt.Fprintf(out, "bytes_per_metric=%.1f\n", float64(bytes)/float64(metrics+hist))
	}
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	fmt.Fprintf(out, "p50=%v\np99=%v\nmax=%v\n", r(kit.Percentile(lat, 50)), r(kit.Percentile(lat, 99)), r(kit.Percentile(lat, 100)))
	fmt.Fprintf(out, "msg_p50=%v\nmsg_p99=%v\nmsg_max=%v\n", r(kit.Percentile(msgLat, 50)), r(kit.Percentile(msgLat, 99)), r(kit.Percentile(msgLat, 100)))
	fmt.Fprintf(out, "big=%d\nbig_p50=%v\nbig_max=%v\n", len(bigLat), r(kit.Percentile(bigLat, 50)), r(kit.Percentile(bigLat, 100)))
	return nil
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
