package config

import (
	"bytes"
	"os"
	"testing"

	"github.com/edged/edged/internal/testutil/peer"

	"github.com/edged/edged/plc/config/internal/unitgen"
)

const unitsCSV = "../../../shared/opcua-schema/UNECE_to_OPCUA.csv"

// TestGeneratedUnitsUpToDate regenerates zz_units.go from the OPC UA schema
// and compares it with the committed file. Skipped where the schema
// directory is absent, except in CI.
func TestGeneratedUnitsUpToDate(t *testing.T) {
	f, err := os.Open(unitsCSV)
	if os.IsNotExist(err) {
		peer.Missing(t, "%s absent (../shared/opcua-schema beside the project)", unitsCSV)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := unitgen.Generate(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("zz_units.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("zz_units.go is stale: run go generate ./plc/config")
	}
}

func TestGenerateRejectsBadTables(t *testing.T) {
	for _, in := range []string{
		"",
		"Code,Id,Name,Desc\n",
		"UNECECode,UnitId,DisplayName,Description\nA,x,a,b\n",
		"UNECECode,UnitId,DisplayName,Description\nA,1,a,b\nA,2,a,b\n",
		"UNECECode,UnitId,DisplayName,Description\n,1,a,b\n",
		"UNECECode,UnitId,DisplayName,Description\nA,1,a\n",
	} {
		if _, err := unitgen.Generate(bytes.NewReader([]byte(in))); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	src, err := unitgen.Generate(bytes.NewReader([]byte("\ufeffUNECECode,UnitId,DisplayName,Description\nB,2,\"\"\"\",q\nA,1,a,b\n")))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(src, []byte("// Code generated ")) || !bytes.Contains(src, []byte("DO NOT EDIT.")) ||
		bytes.Index(src, []byte(`{"A", 1,`)) > bytes.Index(src, []byte(`{"B", 2, "\"", "q"}`)) {
		t.Errorf("%s", src)
	}
}
