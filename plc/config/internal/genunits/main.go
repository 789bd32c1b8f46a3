// Command genunits writes plc/config/zz_units.go from the OPC UA schema's
// UNECE_to_OPCUA.csv. Run it through go generate in plc/config:
//
//	go generate ./plc/config
package main

import (
	"flag"
	"log"
	"os"

	"github.com/edged/edged/plc/config/internal/unitgen"
)

func main() {
	in := flag.String("in", "../../../shared/opcua-schema/UNECE_to_OPCUA.csv", "UNECE_to_OPCUA.csv")
	out := flag.String("out", "zz_units.go", "output Go file")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	src, err := unitgen.Generate(f)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
