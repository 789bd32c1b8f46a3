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
// live ones; at the end of its input it prints its figures as key=value
// lines.
func consumeMain(args []string, in io.Reader, out io.Writer) error {
	if len(args) != 1 {
		return errors.New("consume: want the broker's URL")
	}
	var (
		mu        sync.Mutex
		counting  bool
		metrics   int
		hist      int
		bytes     int
		lat       []time.Duration
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
		h, err := sparkplug.Decode(payload, func(m *sparkplug.Metric) error {
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
	c, err := mqtt.Dial(context.Background(), args[0], mqtt.Options{ClientID: "sparkbench-consumer", KeepAlive: 30 * time.Second, Handler: handler})
	if err != nil {
		return err
	}
	if err := c.Subscribe(context.Background(), 0, "spBv1.0/#"); err != nil {
		return err
	}
	fmt.Fprintln(out, "ready")
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if sc.Text() == "mark" {
			mu.Lock()
			counting, metrics, hist, bytes, lat, seqGaps = true, 0, 0, 0, lat[:0], 0
			mu.Unlock()
		}
	}
	time.Sleep(100 * time.Millisecond) // what is in flight
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	if decodeErr != nil {
		return decodeErr
	}
	fmt.Fprintf(out, "metrics=%d\nhistorical=%d\nseq_gaps=%d\n", metrics, hist, seqGaps)
	if metrics > 0 {
		fmt.Fprintf(out, "bytes_per_metric=%.1f\n", float64(bytes)/float64(metrics+hist))
	}
	fmt.Fprintf(out, "p50=%v\np99=%v\nmax=%v\n", kit.Percentile(lat, 50).Round(10*time.Microsecond),
		kit.Percentile(lat, 99).Round(10*time.Microsecond), kit.Percentile(lat, 100).Round(10*time.Microsecond))
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
