package config

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestImportCSVExample(t *testing.T) {
	c := loadExample(t)
	f, err := os.Open("testdata/tags.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := c.ImportCSV(f, "plc1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	d, _ := c.Device("plc1")
	if len(d.Tags) != 16 {
		t.Fatalf("%d tags", len(d.Tags))
	}
	want := []Tag{
		{Name: "Level", Type: UInt16, Address: "30101", ScanClass: "slow", Access: Read,
			Scaling: &Scaling{0, 4095, 0, 100}, Units: "P1", Description: "tank level"},
		{Name: "FlowRate", Type: Float32, Address: "ir:200", Order: CDAB, ScanClass: "normal", Access: Read, Units: "MQH"},
		{Name: "Alarm", Type: Bool, Address: "40201", Bit: Int(5), ScanClass: "fast", Access: Read, Description: "alarm bit 5, latched"},
		{Name: "Batch", Type: String, Address: "hr:300", Length: 10, ScanClass: "second", Access: ReadWrite, Description: "batch id"},
		{Name: "Speed", Type: Int32, Address: "hr:310", ScanClass: "normal", Access: ReadWrite, Units: "RPM", Description: `motor speed, "rpm"`},
	}
	if got := d.Tags[11:]; !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
}

func TestImportCSVUnknownDevice(t *testing.T) {
	c := loadExample(t)
	err := c.ImportCSV(strings.NewReader("name,type,address,scan_class,access\n"), "plc9")
	if err == nil || !strings.Contains(err.Error(), `no device "plc9"`) {
		t.Fatal(err)
	}
}

func TestImportCSVLeavesConfigOnError(t *testing.T) {
	c := loadExample(t)
	err := c.ImportCSV(strings.NewReader("name,type,address,scan_class,access,bit\nA,bool,40001,fast,read,x\n"), "plc1")
	if err == nil {
		t.Fatal("no error")
	}
	if d, _ := c.Device("plc1"); len(d.Tags) != 11 {
		t.Fatalf("config changed: %d tags", len(d.Tags))
	}
}

func TestReadTagsCSVErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", []string{"row 1: no header row"}},
		{"name,type,adress,scan_class,access\n", []string{`row 1, column "adress": unknown column`, `row 1, column "address": missing`}},
		{"name,type,address,scan_class,access,name\n", []string{`row 1, column "name": listed twice`}},
		{"name,type,address,scan_class,access,bit,length,raw_min\n" +
			"A,bool,40001,fast,read,x,,\n" +
			"B,string,40010,fast,read,,ten,\n" +
			"C,int16,40020,fast,read,,,0\n" +
			",int16,40021,,read,,,\n",
			[]string{
				`row 2, column bit: "x" is not an integer`,
				`row 3, column length: "ten" is not an integer`,
				`row 4, column raw_min: scaling needs all of`,
				`row 5, column name: empty`,
				`row 5, column scan_class: empty`,
			}},
		{"name,type,address,scan_class,access\nA,int16,40001,fast,read,extra\n", []string{"row 2: 6 cells, the header has 5 columns"}},
		{"# comment\nname,type,address,scan_class,access,raw_max\nA,int16,40001,fast,read,1e\n", []string{`row 3, column raw_max: "1e" is not a number`}},
		{"name,type,address,scan_class,access\nA,\"int16,40001,fast,read\n", []string{"row 2:"}},
	} {
		_, err := ReadTagsCSV(strings.NewReader(tc.in))
		var ce *CSVError
		if !errors.As(err, &ce) {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: want %q in:\n%v", tc.in, w, err)
			}
		}
	}
}

func TestReadTagsCSVHeaderIsLenient(t *testing.T) {
	tags, err := ReadTagsCSV(strings.NewReader("\ufeff Access , NAME,Type,address,scan_class\nread,A,uint16,40001,fast\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tags) != 1 || tags[0] != (Tag{Name: "A", Type: UInt16, Address: "40001", ScanClass: "fast", Access: Read}) {
		t.Errorf("%+v", tags)
	}
}

func TestWriteTagsCSVRoundTrip(t *testing.T) {
	c := loadExample(t)
	for _, d := range c.Devices {
		var b bytes.Buffer
		if err := WriteTagsCSV(&b, d.Tags); err != nil {
			t.Fatal(err)
		}
		got, err := ReadTagsCSV(&b)
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if !reflect.DeepEqual(got, d.Tags) {
			t.Errorf("%s: round trip differs\n%+v\n%+v", d.Name, got, d.Tags)
		}
	}
}

func FuzzReadTagsCSV(f *testing.F) {
	ex, err := os.ReadFile("testdata/tags.csv")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ex)
	f.Add([]byte("name,type,address,scan_class,access\nA,bool,00001,fast,read\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tags, err := ReadTagsCSV(bytes.NewReader(data))
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := WriteTagsCSV(&b, tags); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadTagsCSV(&b); err != nil {
			t.Fatalf("rewritten CSV does not read back: %v\n%s", err, b.Bytes())
		}
	})
}

func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{"40001", "400001", "hr:0", "co:65535", "4x0001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, off, err := ParseAddress(s)
		if err != nil {
			return
		}
		if off < 0 || off > 65535 || !(a == Coils || a == DiscreteInputs || a == InputRegisters || a == HoldingRegisters) {
			t.Fatalf("%q: %v %d", s, a, off)
		}
	})
}
