package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Summarize says what changed from a to b: devices and tags added,
// removed and changed.
func Summarize(a, b *Config) string {
	var addD, remD, chD []string
	addT, remT, chT := 0, 0, 0
	old := map[string]*Device{}
	for i := range a.Devices {
		old[a.Devices[i].Name] = &a.Devices[i]
	}
	seen := map[string]bool{}
	for i := range b.Devices {
		d := &b.Devices[i]
		seen[d.Name] = true
		od := old[d.Name]
		if od == nil {
			addD = append(addD, d.Name)
			addT += len(d.Tags)
			continue
		}
		if !SameDeviceSettings(od, d) {
			chD = append(chD, d.Name)
		}
		ot := map[string]Tag{}
		for _, t := range od.Tags {
			ot[t.Name] = t
		}
		for _, t := range d.Tags {
			o, ok := ot[t.Name]
			switch {
			case !ok:
				addT++
			case !sameJSON(o, t):
				chT++
			}
			delete(ot, t.Name)
		}
		remT += len(ot)
	}
	for name, d := range old {
		if !seen[name] {
			remD = append(remD, name)
			remT += len(d.Tags)
		}
	}
	slices.Sort(remD)
	var parts []string
	list := func(what string, names []string) {
		if len(names) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", what, strings.Join(names, ",")))
		}
	}
	list("devices added", addD)
	list("devices removed", remD)
	list("devices changed", chD)
	parts = append(parts, fmt.Sprintf("tags +%d -%d ~%d", addT, remT, chT))
	if a.BaseCycleMs != b.BaseCycleMs || !sameJSON(a.ScanClasses, b.ScanClasses) || a.Board != b.Board {
		parts = append(parts, "settings changed")
	}
	if historyChanged(a.History, b.History) {
		parts = append(parts, "history settings changed")
	}
	if !sameJSON(a.Northbound, b.Northbound) {
		parts = append(parts, "northbound changed")
	}
	if !sameJSON(a.OPCUA, b.OPCUA) {
		parts = append(parts, "opcua changed")
	}
	return strings.Join(parts, "; ")
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// SameDeviceSettings reports whether devices a and b differ in their tags
// only.
func SameDeviceSettings(a, b *Device) bool {
	x, y := *a, *b
	x.Tags, y.Tags = nil, nil
	return sameJSON(&x, &y)
}
