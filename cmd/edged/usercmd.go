package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/edged/edged/opcua/users"
)

// userMain runs `edged user ...`: the accounts of the data folder. What
// it changes counts at the next ActivateSession of a running edged.
func userMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("edged user", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("data-dir", DefaultDataDir, "edged's data `folder`")
	var roles []string
	fs.Func("role", "a `role` of the user (add; may be repeated): "+strings.Join(users.Roles, ", "), func(s string) error {
		roles = append(roles, s)
		return nil
	})
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: edged user [--data-dir DIR] COMMAND\n\n"+
			"  add NAME --role ROLE       add a user; the password is read from the terminal, or from stdin\n"+
			"  list                       the users and their roles\n"+
			"  passwd NAME                set a user's password\n"+
			"  remove NAME                remove a user\n\nFlags:\n")
		fs.PrintDefaults()
	}
	rest, code := parseCommand(fs, args)
	if rest == nil {
		return code
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "edged user: "+format+"\n", a...)
		return code
	}
	need := func(n int) bool { return len(rest) == n+1 }
	st := users.Open(*dir)
	switch rest[0] {
	case "list":
		if !need(0) {
			return fail(2, "list takes no argument")
		}
		us, err := st.List()
		if err != nil {
			return fail(1, "%v", err)
		}
		for _, u := range us {
			fmt.Fprintf(stdout, "%s\t%s\n", u.Name, strings.Join(u.Roles, ","))
		}
		return 0
	case "add", "passwd":
		if !need(1) {
			return fail(2, "%s takes the user's name", rest[0])
		}
		if rest[0] == "add" && len(roles) == 0 {
			return fail(2, "add needs --role (one of %s)", strings.Join(users.Roles, ", "))
		}
		pw, err := readPassword(stdin, stderr)
		if err != nil {
			return fail(1, "reading the password: %v", err)
		}
		defer clear(pw)
		if rest[0] == "add" {
			err = st.Add(rest[1], roles, pw)
		} else {
			err = st.Passwd(rest[1], pw)
		}
		if err != nil {
			return fail(1, "%v", err)
		}
		fmt.Fprintf(stdout, "%s: %s done (%s)\n", rest[1], rest[0], st.Path())
		return 0
	case "remove":
		if !need(1) {
			return fail(2, "remove takes the user's name")
		}
		if err := st.Remove(rest[1]); err != nil {
			return fail(1, "%v", err)
		}
		fmt.Fprintf(stdout, "%s: removed\n", rest[1])
		return 0
	}
	return fail(2, "unknown command %q; see edged user --help", rest[0])
}

// readPassword reads a password: from the terminal without echo, twice,
// when stdin is one; else the first line of stdin.
func readPassword(stdin io.Reader, prompt io.Writer) ([]byte, error) {
	if f, ok := stdin.(*os.File); ok {
		if t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			return readTerminal(f, t, prompt)
		}
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, users.MaxPasswordLength+2)).ReadBytes('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		return nil, errors.New("no password on stdin")
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

func readTerminal(f *os.File, t *unix.Termios, prompt io.Writer) ([]byte, error) {
	fd := int(f.Fd())
	old := *t
	t.Lflag &^= unix.ECHO
	t.Lflag |= unix.ICANON | unix.ISIG
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
		return nil, err
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, &old)
	r := bufio.NewReader(f)
	read := func(p string) ([]byte, error) {
		fmt.Fprint(prompt, p)
		line, err := r.ReadBytes('\n')
		fmt.Fprintln(prompt)
		return bytes.TrimRight(line, "\r\n"), err
	}
	a, err := read("Password: ")
	if err != nil {
		return nil, err
	}
	b, err := read("Again: ")
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(a, b) {
		return nil, errors.New("the two passwords differ")
	}
	return a, nil
}
