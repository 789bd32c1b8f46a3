package config

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// CSVColumns are the column names of a tag list in CSV, in the order
// WriteCSV writes them. The header row names the columns in any order
// (case and surrounding spaces ignored); name, type, address, scan_class
// and access are required, the others may be left out. An empty cell leaves
// the field unset. The four scaling columns are set together or not at all.
// The history columns make a tag historized (TagHistory): history is the
// mode, history_deadband the deadband ("0.5" absolute, "2%" of the EU
// range), history_period_ms the period.
//
//	name, type, address, unit, bit, length, order, scan_class, access,
//	raw_min, raw_max, eu_min, eu_max, units, debounce, description,
//	history, history_deadband, history_period_ms, history_max_age_days,
//	history_max_mb
var CSVColumns = []string{"name", "type", "address", "unit", "bit", "length", "order", "scan_class", "access",
	"raw_min", "raw_max", "eu_min", "eu_max", "units", "debounce", "description",
	"history", "history_deadband", "history_period_ms", "history_max_age_days", "history_max_mb"}

var requiredCSV = []string{"name", "type", "address", "scan_class", "access"}

// CSVError lists the problems of a CSV tag list, each naming its row — the
// line of the file where the record starts (the header is row 1 unless
// comment lines starting with '#' precede it) — and its column.
type CSVError struct {
	Problems []Problem
}

func (e *CSVError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "config: CSV: %d problem", len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteString("s")
	}
	b.WriteString(":")
	for _, p := range e.Problems {
		b.WriteString("\n\t")
		b.WriteString(p.String())
	}
	return b.String()
}

// ReadTagsCSV reads a tag list: a header row, then one row per tag. It
// checks the cells' syntax (numbers are numbers); the tags' meaning is
// checked by Validate once they are in a Config.
func ReadTagsCSV(r io.Reader) ([]Tag, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	rd := &csvReader{cr: cr}
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &CSVError{Problems: []Problem{{Path: "row 1", Msg: "no header row"}}}
	}
	if err != nil {
		return nil, fmt.Errorf("config: CSV: %w", err)
	}
	rd.readHeader(header)
	if len(rd.probs) > 0 {
		return nil, &CSVError{Problems: rd.probs}
	}
	tags := []Tag{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				rd.add(pe.StartLine, "", "%v", pe.Err)
				break
			}
			return nil, fmt.Errorf("config: CSV: %w", err)
		}
		rd.line, _ = cr.FieldPos(0)
		rd.rec = rec
		if len(rec) > len(header) {
			rd.add(rd.line, "", "%d cells, the header has %d columns", len(rec), len(header))
			continue
		}
		tags = append(tags, rd.tag())
	}
	if len(rd.probs) > 0 {
		return nil, &CSVError{Problems: rd.probs}
	}
	return tags, nil
}

// csvReader is the state of ReadTagsCSV: the columns, the row being read,
// the problems found so far.
type csvReader struct {
	cr    *csv.Reader
	col   map[string]int // column name to its index + 1 (0: absent)
	rec   []string
	line  int
	probs []Problem
}

func (rd *csvReader) add(row int, col, format string, args ...any) {
	p := fmt.Sprintf("row %d", row)
	if col != "" {
		p += ", column " + col
	}
	rd.probs = append(rd.probs, Problem{Path: p, Msg: fmt.Sprintf(format, args...)})
}

// readHeader maps the header's columns: each known, once; the required
// ones there.
func (rd *csvReader) readHeader(header []string) {
	hl, _ := rd.cr.FieldPos(0)
	rd.col = map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		switch {
		case !slices.Contains(CSVColumns, h):
			rd.add(hl, strconv.Quote(h), "unknown column (known: %s)", strings.Join(CSVColumns, ", "))
		case rd.col[h] != 0:
			rd.add(hl, strconv.Quote(h), "listed twice")
		default:
			rd.col[h] = i + 1
		}
	}
	for _, c := range requiredCSV {
		if rd.col[c] == 0 {
			rd.add(hl, strconv.Quote(c), "missing (required columns: %s)", strings.Join(requiredCSV, ", "))
		}
	}
}

// cell is the row's cell of column c, "" when absent.
func (rd *csvReader) cell(c string) string {
	i := rd.col[c]
	if i == 0 || i > len(rd.rec) {
		return ""
	}
	return strings.TrimSpace(rd.rec[i-1])
}

// integer is the row's integer of column c, nil when empty; false after a
// problem.
func (rd *csvReader) integer(c string) (*int, bool) {
	s := rd.cell(c)
	if s == "" {
		return nil, true
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		rd.add(rd.line, c, "%q is not an integer", s)
		return nil, false
	}
	return &n, true
}

// tag reads the row's tag.
func (rd *csvReader) tag() Tag {
	t := Tag{
		Name:        rd.cell("name"),
		Type:        Type(rd.cell("type")),
		Address:     rd.cell("address"),
		Order:       Order(rd.cell("order")),
		ScanClass:   rd.cell("scan_class"),
		Access:      Access(rd.cell("access")),
		Units:       rd.cell("units"),
		Description: rd.cell("description"),
	}
	t.Unit, _ = rd.integer("unit")
	t.Bit, _ = rd.integer("bit")
	if n, _ := rd.integer("length"); n != nil {
		t.Length = *n
	}
	if n, _ := rd.integer("debounce"); n != nil {
		t.Debounce = *n
	}
	t.Scaling = rd.scaling()
	t.History = rd.history()
	for _, c := range requiredCSV {
		if rd.cell(c) == "" {
			rd.add(rd.line, c, "empty")
		}
	}
	return t
}

// scaling is the row's scaling: all four cells or none.
func (rd *csvReader) scaling() *Scaling {
	var sc [4]float64
	set := 0
	for i, c := range []string{"raw_min", "raw_max", "eu_min", "eu_max"} {
		s := rd.cell(c)
		if s == "" {
			continue
		}
		set++
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			rd.add(rd.line, c, "%q is not a number", s)
			continue
		}
		sc[i] = f
	}
	switch set {
	case 0:
		return nil
	case 4:
		return &Scaling{RawMin: sc[0], RawMax: sc[1], EUMin: sc[2], EUMax: sc[3]}
	}
	rd.add(rd.line, "raw_min", "scaling needs all of raw_min, raw_max, eu_min, eu_max")
	return nil
}

// history is the row's history settings: nil without a mode.
func (rd *csvReader) history() *TagHistory {
	mode := rd.cell("history")
	if mode == "" {
		for _, c := range []string{"history_deadband", "history_period_ms", "history_max_age_days", "history_max_mb"} {
			if rd.cell(c) != "" {
				rd.add(rd.line, c, "set without a history mode (column history: change, deadband or period)")
			}
		}
		return nil
	}
	h := &TagHistory{Mode: HistoryMode(mode)}
	if s := rd.cell("history_deadband"); s != "" {
		h.DeadbandType = DeadbandAbsolute
		if p, ok := strings.CutSuffix(s, "%"); ok {
			s, h.DeadbandType = strings.TrimSpace(p), DeadbandPercent
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			rd.add(rd.line, "history_deadband", "%q is not a number or a percentage", rd.cell("history_deadband"))
		}
		h.Deadband = f
	}
	for c, p := range map[string]*int{"history_period_ms": &h.PeriodMs, "history_max_age_days": &h.MaxAgeDays, "history_max_mb": &h.MaxMB} {
		if n, _ := rd.integer(c); n != nil {
			*p = *n
		}
	}
	return h
}

// ImportCSV reads a tag list (see ReadTagsCSV) and appends its tags to the
// device called device, which must exist. On an error c is unchanged. Call
// Validate afterwards to check the tags in their device.
func (c *Config) ImportCSV(r io.Reader, device string) error {
	d, ok := c.Device(device)
	if !ok {
		return fmt.Errorf("config: import CSV: no device %q", device)
	}
	tags, err := ReadTagsCSV(r)
	if err != nil {
		return err
	}
	d.Tags = append(d.Tags, tags...)
	return nil
}

// WriteTagsCSV writes tags as a CSV tag list with all of CSVColumns, which
// ReadTagsCSV reads back.
func WriteTagsCSV(w io.Writer, tags []Tag) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVColumns); err != nil {
		return err
	}
	opt := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	nz := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	for _, t := range tags {
		var s [4]string
		if t.Scaling != nil {
			for i, f := range []float64{t.Scaling.RawMin, t.Scaling.RawMax, t.Scaling.EUMin, t.Scaling.EUMax} {
				s[i] = strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
		var h [5]string
		if th := t.History; th != nil {
			h[0] = string(th.Mode)
			if th.Deadband != 0 {
				h[1] = strconv.FormatFloat(th.Deadband, 'g', -1, 64)
				if th.DeadbandType == DeadbandPercent {
					h[1] += "%"
				}
			}
			h[2], h[3], h[4] = nz(th.PeriodMs), nz(th.MaxAgeDays), nz(th.MaxMB)
		}
		rec := []string{t.Name, string(t.Type), t.Address, opt(t.Unit), opt(t.Bit), nz(t.Length), string(t.Order),
			t.ScanClass, string(t.Access), s[0], s[1], s[2], s[3], t.Units, nz(t.Debounce), t.Description,
			h[0], h[1], h[2], h[3], h[4]}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
