package config

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CSVColumns are the column names of a tag list in CSV, in the order
// WriteCSV writes them. The header row names the columns in any order
// (case and surrounding spaces ignored); name, type, address, scan_class
// and access are required, the others may be left out. An empty cell leaves
// the field unset. The four scaling columns are set together or not at all.
//
//	name, type, address, unit, bit, length, order, scan_class, access,
//	raw_min, raw_max, eu_min, eu_max, units, debounce, description
var CSVColumns = []string{"name", "type", "address", "unit", "bit", "length", "order", "scan_class", "access",
	"raw_min", "raw_max", "eu_min", "eu_max", "units", "debounce", "description"}

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
	var probs []Problem
	add := func(row int, col, format string, args ...any) {
		p := fmt.Sprintf("row %d", row)
		if col != "" {
			p += ", column " + col
		}
		probs = append(probs, Problem{Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &CSVError{Problems: []Problem{{Path: "row 1", Msg: "no header row"}}}
	}
	if err != nil {
		return nil, fmt.Errorf("config: CSV: %w", err)
	}
	hl, _ := cr.FieldPos(0)
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		known := false
		for _, c := range CSVColumns {
			known = known || c == h
		}
		switch {
		case !known:
			add(hl, strconv.Quote(h), "unknown column (known: %s)", strings.Join(CSVColumns, ", "))
		case col[h] != 0:
			add(hl, strconv.Quote(h), "listed twice")
		default:
			col[h] = i + 1 // 0 means absent
		}
	}
	for _, c := range requiredCSV {
		if col[c] == 0 {
			add(hl, strconv.Quote(c), "missing (required columns: %s)", strings.Join(requiredCSV, ", "))
		}
	}
	if len(probs) > 0 {
		return nil, &CSVError{Problems: probs}
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
				add(pe.StartLine, "", "%v", pe.Err)
				break
			}
			return nil, fmt.Errorf("config: CSV: %w", err)
		}
		line, _ := cr.FieldPos(0)
		cell := func(c string) string {
			i := col[c]
			if i == 0 || i > len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[i-1])
		}
		if len(rec) > len(header) {
			add(line, "", "%d cells, the header has %d columns", len(rec), len(header))
			continue
		}
		integer := func(c string) (*int, bool) {
			s := cell(c)
			if s == "" {
				return nil, true
			}
			n, err := strconv.Atoi(s)
			if err != nil {
				add(line, c, "%q is not an integer", s)
				return nil, false
			}
			return &n, true
		}
		t := Tag{
			Name:        cell("name"),
			Type:        Type(cell("type")),
			Address:     cell("address"),
			Order:       Order(cell("order")),
			ScanClass:   cell("scan_class"),
			Access:      Access(cell("access")),
			Units:       cell("units"),
			Description: cell("description"),
		}
		t.Unit, _ = integer("unit")
		t.Bit, _ = integer("bit")
		if n, _ := integer("length"); n != nil {
			t.Length = *n
		}
		if n, _ := integer("debounce"); n != nil {
			t.Debounce = *n
		}
		var sc [4]float64
		set := 0
		for i, c := range []string{"raw_min", "raw_max", "eu_min", "eu_max"} {
			s := cell(c)
			if s == "" {
				continue
			}
			set++
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				add(line, c, "%q is not a number", s)
				continue
			}
			sc[i] = f
		}
		switch set {
		case 0:
		case 4:
			t.Scaling = &Scaling{RawMin: sc[0], RawMax: sc[1], EUMin: sc[2], EUMax: sc[3]}
		default:
			add(line, "raw_min", "scaling needs all of raw_min, raw_max, eu_min, eu_max")
		}
		for _, c := range requiredCSV {
			if cell(c) == "" {
				add(line, c, "empty")
			}
		}
		tags = append(tags, t)
	}
	if len(probs) > 0 {
		return nil, &CSVError{Problems: probs}
	}
	return tags, nil
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
		rec := []string{t.Name, string(t.Type), t.Address, opt(t.Unit), opt(t.Bit), nz(t.Length), string(t.Order),
			t.ScanClass, string(t.Access), s[0], s[1], s[2], s[3], t.Units, nz(t.Debounce), t.Description}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
