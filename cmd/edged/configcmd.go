package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/edged/edged/configsvc"
	pconfig "github.com/edged/edged/plc/config"
)

// configMain runs `edged config ...` on the configuration versions of
// the data folder, with a running edged or without one: reading is safe
// either way, and a rollback goes through a running edged (its control
// socket), so that it is applied live, or is stored for the next start.
func configMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("edged config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("data-dir", DefaultDataDir, "edged's data `folder`")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: edged config [--data-dir DIR] COMMAND\n\n"+
			"  validate FILE       check a configuration file as a whole; exit 2 when it has problems\n"+
			"  show [VERSION]      print a stored version's document (default: the current one)\n"+
			"  history             the stored versions: time, user, client, comment, summary, state\n"+
			"  rollback VERSION    apply a stored version again, as a new version\n\nFlags:\n")
		fs.PrintDefaults()
	}
	rest, code := parseCommand(fs, args)
	if rest == nil {
		return code
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "edged config: "+format+"\n", a...)
		return code
	}
	version := func(s string) (uint32, error) {
		v, err := strconv.ParseUint(s, 10, 32)
		if err != nil || v == 0 {
			return 0, fmt.Errorf("%q is not a version number", s)
		}
		return uint32(v), nil
	}
	switch rest[0] {
	case "validate":
		if len(rest) != 2 {
			return fail(2, "validate FILE")
		}
		c, err := pconfig.Load(rest[1])
		if err != nil {
			return fail(2, "%s: %v", rest[1], err)
		}
		n := 0
		for _, d := range c.Devices {
			n += len(d.Tags)
		}
		fmt.Fprintf(stdout, "edged config: %s OK: %d devices, %d tags\n", rest[1], len(c.Devices), n)
		return 0
	case "show", "history":
		st, err := configsvc.OpenDataDir(*dir)
		if err != nil {
			return fail(1, "%v", err)
		}
		if rest[0] == "history" {
			for _, m := range st.History() {
				fmt.Fprintf(stdout, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Version, m.Time.Format(time.RFC3339), m.User, m.State, m.Client, m.Comment, m.Summary)
			}
			return 0
		}
		m, doc, err := st.Current()
		if len(rest) > 1 {
			v, verr := version(rest[1])
			if verr != nil {
				return fail(2, "show: %v", verr)
			}
			var ok bool
			if m, doc, ok = st.Get(v); !ok {
				return fail(1, "no version %d in %s", v, st.Dir())
			}
		} else if err != nil {
			return fail(1, "%v", err)
		}
		var b bytes.Buffer
		json.Indent(&b, doc, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b.Bytes())
		fmt.Fprintf(stderr, "edged config: version %d, %s by %s: %s\n", m.Version, m.Time.Format(time.RFC3339), m.User, m.Summary)
		return 0
	case "rollback":
		if len(rest) != 2 {
			return fail(2, "rollback VERSION")
		}
		v, err := version(rest[1])
		if err != nil {
			return fail(2, "rollback: %v", err)
		}
		nv, live, problems, err := configsvc.Rollback(*dir, v)
		switch {
		case err != nil:
			return fail(1, "%v", err)
		case len(problems) > 0:
			for _, p := range problems {
				fmt.Fprintf(stderr, "edged config: %s\n", p)
			}
			return 1
		case live:
			fmt.Fprintf(stdout, "edged config: version %d (the document of version %d) runs now\n", nv, v)
		default:
			fmt.Fprintf(stdout, "edged config: version %d (the document of version %d) stored; edged runs it at its next start\n", nv, v)
		}
		return 0
	}
	fs.Usage()
	return 2
}
