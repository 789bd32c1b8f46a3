package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/edged/edged/configsvc"
	pconfig "github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/sim"
)

// configOf returns the simulator's configuration with more tags, n in
// all, on devices of at most 1,000 tags each (holding registers of the
// simulator's unit 1), the last one in scan class class.
func configOf(n int, class string) pconfig.Config {
	c := pconfig.Simulator()
	for _, d := range c.Devices {
		n -= len(d.Tags)
	}
	for i := 0; i < n; i++ {
		if i%1000 == 0 {
			d := pconfig.Device{Name: fmt.Sprintf("bulk%d", i/1000), Kind: pconfig.KindModbusTCP, NoCommTimeoutMs: 5000,
				ModbusTCP: pconfig.DefaultModbusTCP(pconfig.SimulatorAddress)}
			c.Devices = append(c.Devices, d)
		}
		d := &c.Devices[len(c.Devices)-1]
		cl := "fast"
		if i == n-1 {
			cl = class
		}
		d.Tags = append(d.Tags, pconfig.Tag{Name: fmt.Sprintf("T%05d", i), Type: pconfig.UInt16, Address: fmt.Sprintf("hr:%d", 1000+i%1000),
			ScanClass: cl, Access: pconfig.Read})
	}
	return c
}

// BenchmarkApply: one Apply through the configuration service, as a
// client's Apply runs it (parse, validate, drivers, engine, address
// space, version stored with fsync), on a running stack with the
// simulator, for configurations of 100, 1,000 and 10,000 tags; each
// change moves one tag to another scan class, so one device is made
// anew.
func BenchmarkApply(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("tags=%d", n), func(b *testing.B) {
			conf := configOf(n, "fast")
			store, err := configsvc.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			docs := [2][]byte{}
			for i, class := range []string{"fast", "slow"} {
				c := configOf(n, class)
				docs[i], _ = json.Marshal(&c)
			}
			store.Add(configsvc.Meta{User: "bench"}, docs[0])
			st, err := New(Config{Plant: &conf, Simulator: &sim.Options{}, Versions: store})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close(context.Background())
			svc := st.Config
			st.Start()
			b.ResetTimer()
			for i := range b.N {
				if _, p := svc.Apply(context.Background(), "bench", docs[(i+1)%2], 0, 0, ""); len(p) > 0 {
					b.Fatal(p)
				}
			}
		})
	}
}
