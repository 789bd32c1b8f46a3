package stack

import (
	"context"
	"runtime"
	"testing"

	"github.com/edged/edged/plc/sim"
)

// BenchmarkMemoryPerTag: the live heap of a running stack (simulator,
// drivers, engine, server, binding) with 10,000 tags on 10 simulated
// devices, less that of the simulator's 15 tags alone, per tag, after a
// collection: what a tag costs. For the profile of where it goes:
// go test -run X -bench MemoryPerTag -memprofile mem.out ./internal/stack
// (go tool pprof -sample_index=inuse_space).
func BenchmarkMemoryPerTag(b *testing.B) {
	live := func(n int) uint64 {
		conf := configOf(n, "fast")
		st, err := New(Config{Plant: &conf, Simulator: &sim.Options{Manual: true}})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close(context.Background())
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	var per float64
	for b.Loop() {
		base := live(15)
		all := live(10000)
		per = float64(all-base) / (10000 - 15)
	}
	b.ReportMetric(per, "heap-B/tag")
}
