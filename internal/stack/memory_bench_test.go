package stack

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/edged/edged/plc/sim"
)

// BenchmarkMemoryPerTag: the live heap of a running stack (simulator,
// drivers, engine, server, binding) with 10,000 tags on 10 simulated
// devices, less that of the simulator's 15 tags alone, per tag, after a
// collection: what a tag costs. For where it goes, EDGED_HEAPPROFILE=FILE
// writes the heap profile of the running 10,000-tag stack (-memprofile
// would be taken after it closed):
// EDGED_HEAPPROFILE=heap.out go test -run X -bench MemoryPerTag ./internal/stack
// then go tool pprof -sample_index=inuse_space -top heap.out.
func BenchmarkMemoryPerTag(b *testing.B) {
	profile := os.Getenv("EDGED_HEAPPROFILE")
	if profile != "" {
		runtime.MemProfileRate = 512
	}
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
		if profile != "" && n > 15 {
			f, err := os.Create(profile)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
				b.Fatal(err)
			}
		}
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
