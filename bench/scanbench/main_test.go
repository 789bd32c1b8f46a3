package main

import "testing"

// TestBenchConfig: the bench configuration is valid and holds 1,000 tags
// on 4 devices, and the load's NodeIds name tags of it.
func TestBenchConfig(t *testing.T) {
	c := benchConfig("127.0.0.1:502")
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	n := 0
	names := map[string]bool{}
	for _, d := range c.Devices {
		for _, tag := range d.Tags {
			names[d.Name+"."+tag.Name] = true
			n++
		}
	}
	if len(c.Devices) != benchDevices || n != 1000 || len(names) != 1000 {
		t.Errorf("%d devices, %d tags (%d names), want 4 and 1000", len(c.Devices), n, len(names))
	}
	for g := range 1000 {
		tag, _, _ := tagName(g % tagsPerDev)
		if id := deviceName(g/tagsPerDev) + "." + tag; !names[id] {
			t.Errorf("the load reads %s, not a tag", id)
		}
	}
}
