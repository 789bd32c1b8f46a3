package config

import "math"

// History configures the history store of the gateway (the tsdb
// package): how often it writes, how much it keeps, and the aggregate
// configuration its processed reads use by default. It is needed when a
// tag has a History.
type History struct {
	// FlushIntervalMs is how often samples are written to flash, 100..60000:
	// at most this much is lost at a power cut. Simulator() uses 1000.
	FlushIntervalMs int `json:"flush_interval_ms"`
	// MaxAgeDays and MaxMB bound what is kept for all tags (0: no bound);
	// the oldest samples go first.
	MaxAgeDays int `json:"max_age_days,omitempty"`
	MaxMB      int `json:"max_mb,omitempty"`
	// ReserveMB is the space left free on the data partition for the
	// configuration versions, certificates and users, 1..1048576: history
	// gives way to it and pauses when there is nothing left to give.
	ReserveMB int `json:"reserve_mb"`
	// Aggregates is the default aggregate configuration of processed
	// history reads (OPC 10000-13 §4.2.1.2).
	Aggregates *Aggregates `json:"aggregates"`
}

// Aggregates is OPC UA's AggregateConfiguration.
type Aggregates struct {
	TreatUncertainAsBad    bool `json:"treat_uncertain_as_bad"`
	PercentDataBad         int  `json:"percent_data_bad"`  // 0..100
	PercentDataGood        int  `json:"percent_data_good"` // 0..100, ≥ 100 − percent_data_bad
	UseSlopedExtrapolation bool `json:"use_sloped_extrapolation"`
}

// HistoryMode says when a tag's value is recorded.
type HistoryMode string

// History modes.
const (
	// OnChange records every change of the value or the status.
	OnChange HistoryMode = "change"
	// OnDeadband records a change of the value beyond Deadband (absolute,
	// or percent of the EU range), and every change of the status.
	OnDeadband HistoryMode = "deadband"
	// Periodic records the value every PeriodMs, at the multiples of the
	// period, when the tag was read since the last record.
	Periodic HistoryMode = "period"
)

// DeadbandType is how a deadband is measured.
type DeadbandType string

// Deadband types.
const (
	DeadbandAbsolute DeadbandType = "absolute"
	DeadbandPercent  DeadbandType = "percent" // of the EU range (scaling's eu_min..eu_max)
)

// TagHistory makes a tag historized.
type TagHistory struct {
	Mode HistoryMode `json:"mode"`
	// Deadband and DeadbandType, for mode deadband.
	Deadband     float64      `json:"deadband,omitempty"`
	DeadbandType DeadbandType `json:"deadband_type,omitempty"`
	// PeriodMs, for mode period, 10..86400000.
	PeriodMs int `json:"period_ms,omitempty"`
	// MaxAgeDays and MaxMB bound what is kept of this tag (0: History's
	// bounds only).
	MaxAgeDays int `json:"max_age_days,omitempty"`
	MaxMB      int `json:"max_mb,omitempty"`
	// Stepped says the value holds between samples (true) or changes
	// linearly (false) for interpolation and aggregates. Absent: true for
	// bools, integers without scaling and strings, false otherwise.
	Stepped *bool `json:"stepped,omitempty"`
}

// IsStepped returns whether t's history is stepped (see
// TagHistory.Stepped).
func (t *Tag) IsStepped() bool {
	if t.History != nil && t.History.Stepped != nil {
		return *t.History.Stepped
	}
	switch t.Type {
	case Float32, Float64:
		return false
	}
	return t.Scaling == nil
}

// Bounds of the history settings.
const (
	MaxHistoryDays = 36500
	MaxHistoryMB   = 1 << 20
)

// DefaultHistory returns complete history settings: a flush every second,
// no bounds but a reserve of 32 MiB, and Part 13's default aggregate
// configuration (uncertain as bad, 100 % good and bad, stepped
// extrapolation).
func DefaultHistory() *History {
	return &History{FlushIntervalMs: 1000, ReserveMB: 32,
		Aggregates: &Aggregates{TreatUncertainAsBad: true, PercentDataBad: 100, PercentDataGood: 100}}
}

func (v *validator) history(c *Config) {
	historized := ""
	for i := range c.Devices {
		for j := range c.Devices[i].Tags {
			if c.Devices[i].Tags[j].History != nil && historized == "" {
				historized = tagPath(devPath(i, &c.Devices[i]), j, &c.Devices[i].Tags[j])
			}
		}
	}
	h := c.History
	if h == nil {
		if historized != "" {
			v.add("history", "missing, and %s.history asks for history (the store's settings: flush_interval_ms, reserve_mb, aggregates)", historized)
		}
		return
	}
	v.intRange("history.flush_interval_ms", h.FlushIntervalMs, 100, 60000, " (the usual value is 1000)")
	v.bound("history.max_age_days", h.MaxAgeDays, MaxHistoryDays)
	v.bound("history.max_mb", h.MaxMB, MaxHistoryMB)
	v.intRange("history.reserve_mb", h.ReserveMB, 1, MaxHistoryMB, " (the usual value is 32)")
	a := h.Aggregates
	if a == nil {
		v.add("history.aggregates", `missing (e.g. {"treat_uncertain_as_bad": true, "percent_data_bad": 100, "percent_data_good": 100, "use_sloped_extrapolation": false})`)
		return
	}
	if a.PercentDataBad < 0 || a.PercentDataBad > 100 {
		v.add("history.aggregates.percent_data_bad", "%d is outside 0..100", a.PercentDataBad)
	}
	if a.PercentDataGood < 0 || a.PercentDataGood > 100 {
		v.add("history.aggregates.percent_data_good", "%d is outside 0..100", a.PercentDataGood)
	}
	if a.PercentDataGood < 100-a.PercentDataBad {
		v.add("history.aggregates.percent_data_good", "%d is below 100 − percent_data_bad (%d): OPC 10000-13 asks good ≥ 100 − bad", a.PercentDataGood, 100-a.PercentDataBad)
	}
}

func (v *validator) bound(path string, x, hi int) {
	if x < 0 || x > hi {
		v.add(path, "%d is outside 0..%d (0: no bound)", x, hi)
	}
}

// tagHistory checks a tag's history settings.
func (v *validator) tagHistory(tp string, t *Tag) {
	h := t.History
	if h == nil {
		return
	}
	p := tp + ".history"
	switch h.Mode {
	case OnChange, OnDeadband, Periodic:
	case "":
		v.add(p+".mode", "missing (change, deadband or period)")
	default:
		v.add(p+".mode", "%q is not change, deadband or period", h.Mode)
	}
	if h.Mode == OnDeadband {
		if !numeric(t.Type) {
			v.add(p+".mode", "deadband is for numbers, not a %s", t.Type)
		}
		if !(h.Deadband > 0) || math.IsInf(h.Deadband, 0) {
			v.add(p+".deadband", "missing or not a positive number (%g)", h.Deadband)
		}
		switch h.DeadbandType {
		case DeadbandAbsolute:
		case DeadbandPercent:
			if t.Scaling == nil {
				v.add(p+".deadband_type", "percent of the EU range needs the tag's scaling (eu_min..eu_max)")
			}
			if h.Deadband > 100 {
				v.add(p+".deadband", "%g %% is above 100", h.Deadband)
			}
		case "":
			v.add(p+".deadband_type", "missing (absolute or percent)")
		default:
			v.add(p+".deadband_type", "%q is not absolute or percent", h.DeadbandType)
		}
	} else {
		if h.Deadband != 0 {
			v.add(p+".deadband", "only for mode deadband")
		}
		if h.DeadbandType != "" {
			v.add(p+".deadband_type", "only for mode deadband")
		}
	}
	if h.Mode == Periodic {
		v.intRange(p+".period_ms", h.PeriodMs, 10, 86400000, "")
	} else if h.PeriodMs != 0 {
		v.add(p+".period_ms", "only for mode period")
	}
	v.bound(p+".max_age_days", h.MaxAgeDays, MaxHistoryDays)
	v.bound(p+".max_mb", h.MaxMB, MaxHistoryMB)
}

// historyChanged says whether the store's settings differ.
func historyChanged(a, b *History) bool { return !sameJSON(a, b) }
