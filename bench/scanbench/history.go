package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"slices"
	"strings"
	"time"

	"github.com/edged/edged/historian"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/tsdb"
)

// The history runs (make bench-history): -bulk adds bulkPerDevice-tag
// devices in the 1 s scan class, each tag a UInt16 of one of the
// simulator's changing registers (the words of Counter, Sine and Ramp,
// hr:0..7), and the simulator's own device; -history records the bulk
// tags every second and the simulator's: "change" all on every change,
// "sim" as the simulator's configuration has them (its mix).
const bulkPerDevice = 1000

// withBulk adds n bulk tags (a multiple of bulkPerDevice) in scan class
// class polling the simulator at addr, with alarms a High limit alarm at
// high on each, and, with hist, their history and the simulator's device.
func withBulk(c config.Config, addr string, n int, hist, class string, alarms bool, high float64) config.Config {
	c.Devices = slices.Clone(c.Devices)
	for d := range n / bulkPerDevice {
		dev := config.Device{Name: fmt.Sprintf("h%d", d), Kind: config.KindModbusTCP, NoCommTimeoutMs: 5000,
			ModbusTCP: config.DefaultModbusTCP(addr)}
		for j := range bulkPerDevice {
			t := config.Tag{Name: fmt.Sprintf("T%04d", j), Type: config.UInt16, Address: fmt.Sprintf("hr:%d", j%8),
				ScanClass: class, Access: config.Read}
			if alarms {
				t.Alarm = &config.TagAlarm{Kind: config.AlarmLimit, High: &high, Deadband: 100, Severity: 300}
			}
			if hist != "" {
				t.History = &config.TagHistory{Mode: config.Periodic, PeriodMs: 1000}
			}
			dev.Tags = append(dev.Tags, t)
		}
		c.Devices = append(c.Devices, dev)
	}
	sd := config.Simulator().Devices[0]
	sd.ModbusTCP = config.DefaultModbusTCP(addr)
	sd.Tags = slices.Clone(sd.Tags)
	for i := range sd.Tags {
		t := &sd.Tags[i]
		switch {
		case hist == "":
			t.History = nil
		case hist == "change":
			t.History = &config.TagHistory{Mode: config.OnChange}
		case t.History != nil:
			h := *t.History
			t.History = &h
		}
	}
	c.Devices = append(c.Devices, sd)
	if hist != "" {
		c.History = config.DefaultHistory()
	}
	return c
}

// reportHistory prints the store's figures over the window: samples,
// bytes on disk per sample, the writes and their average size, the bytes
// written per day at this rate.
func reportHistory(out io.Writer, hs *historian.Historian, s0, s1 *tsdb.Stats, wall time.Duration) {
	h := hs.Stats()
	samples := s1.Appended - s0.Appended
	writes, written := s1.Writes-s0.Writes, s1.Written-s0.Written
	fmt.Fprintf(out, "  history: %d tags, %d samples (%.0f/s), %d dropped, paused %q\n",
		h.Tags, samples, float64(samples)/wall.Seconds(), s1.Dropped-s0.Dropped, s1.Paused)
	fmt.Fprintf(out, "  history on disk: %d bytes for %d samples since the start: %.2f bytes/sample (log %d blocks %d)\n",
		s1.Bytes, s1.Appended, float64(s1.Bytes)/float64(max(s1.Appended, 1)), s1.Bytes-s1.BlockBytes, s1.BlockBytes)
	if s1.BlockSamples > 0 {
		fmt.Fprintf(out, "  history blocks: %d, %.2f bytes/sample in them\n", s1.Blocks, float64(s1.BlockBytes)/float64(s1.BlockSamples))
	}
	fmt.Fprintf(out, "  history writes: %d in the window, %.1f KiB on average, %d blocks; %.1f MB written a day at this rate; last flush %v\n",
		writes, float64(written)/float64(max(writes, 1))/1024, s1.Blocked-s0.Blocked,
		float64(written)/wall.Seconds()*86400/1e6, s1.LastFlush)
}

// rss returns the process's resident set and its high-water mark, in KiB.
func rss() (cur, hwm int64) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var n int64
		fmt.Sscanf(strings.TrimSpace(v), "%d", &n)
		switch k {
		case "VmRSS":
			cur = n
		case "VmHWM":
			hwm = n
		}
	}
	return cur, hwm
}

// goMemory describes the Go runtime's memory: the heap's objects, its
// free pages not yet given back, the stacks and the runtime's own.
func goMemory() string {
	names := []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/free:bytes",
		"/memory/classes/heap/stacks:bytes", "/memory/classes/total:bytes", "/memory/classes/heap/released:bytes",
		"/gc/heap/live:bytes", "/gc/heap/goal:bytes"}
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	mib := func(i int) float64 { return float64(s[i].Value.Uint64()) / (1 << 20) }
	return fmt.Sprintf("Go: heap live %.1f MiB (goal %.1f), objects %.1f, free %.1f, stacks %.1f, all mapped less released %.1f",
		mib(5), mib(6), mib(0), mib(1), mib(2), mib(3)-mib(4))
}
