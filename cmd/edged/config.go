package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/edged/edged/opcua/server"
	pconfig "github.com/edged/edged/plc/config"
)

// config is the result of parsing edged's command line.
type config struct {
	showVersion bool
	// listen is the TCP address edged binds, as given to --listen.
	listen string
	// advertiseHost is the host name or IP literal (without brackets)
	// that goes into the endpoint URL; see resolveAdvertiseHost.
	advertiseHost string
	// maxSessions and maxConnections bound the OPC UA sessions and TCP
	// connections; dataEfficient leaves Nagle's algorithm on.
	maxSessions    int
	maxConnections int
	dataEfficient  bool
	// readSpin is how long a connection polls for the next request
	// before it blocks (uasc.Config.ReadSpin); 0 blocks at once.
	readSpin time.Duration

	// configFile is the JSON configuration (--config); "" runs the
	// built-in simulator. importCSV is a CSV tag list merged into device
	// csvDevice; board, when set, replaces the configuration's board.
	configFile string
	importCSV  string
	csvDevice  string
	board      string
	// checkConfig only validates the configuration (--check-config);
	// configReplace makes it a new version even when the data folder
	// holds versions (--config-replace).
	checkConfig   bool
	configReplace bool
	// reportEvery is how often the scan statistics are printed (0: never).
	reportEvery time.Duration
	// dataDir holds the PKI folders (--data-dir); allowInsecure offers
	// SecurityPolicy None for sessions (--allow-insecure).
	dataDir       string
	allowInsecure bool
	// mqtt is --mqtt: a broker to publish every tag to (Sparkplug B).
	mqtt string
	// reverse are --reverse-connect's clients (repeatable).
	reverse     urlList
	simInMemory bool // --sim-in-memory: sim.Options.InMemory
	poller      bool // --poller: server.Config.Poller
	hostname    string
	// anonymous are the roles of anonymous sessions (--anonymous-role;
	// 0: refused).
	anonymous server.Roles
	// The gateway: the watchdog device ("" the board's, "none") and its
	// timeout; the scan's SCHED_FIFO priority and CPU (-1: the board's;
	// priority 0: normal scheduling; CPU -2: none); stallAfter stalls
	// the scan, for watchdog tests only.
	watchdog        string
	watchdogTimeout time.Duration
	rtPriority      int
	rtCPU           int
	stallAfter      time.Duration
}

// usageError is a bad command line: main reports it and exits with code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// isUsageError reports whether err came from a bad command line.
func isUsageError(err error) bool {
	var ue *usageError
	return errors.As(err, &ue)
}

// parseFlags parses args (without the program name). hostname is
// os.Hostname, injected for tests. Flag errors and --help output go to
// stderr. It returns flag.ErrHelp for -h/--help and a *usageError for any
// other bad command line.
func parseFlags(args []string, hostname func() (string, error), stderr io.Writer) (config, error) {
	host, err := hostname()
	if err != nil || !usableHostname(host) {
		// A gateway booted without a host name ("(none)", the kernel's
		// default): its first address, which a client can use.
		host = firstAddress()
	}
	cfg := config{hostname: host}
	fs, more := newFlagSet(&cfg, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		// The flag package has already printed the error and the usage.
		return cfg, &usageError{msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return cfg, &usageError{msg: fmt.Sprintf("unexpected argument %q (edged takes only flags; see --help)", fs.Arg(0))}
	}
	if cfg.showVersion {
		return cfg, nil
	}
	if err := cfg.check(more); err != nil {
		return cfg, err
	}
	return cfg, cfg.resolveHosts(fs, more)
}

// moreFlags are the flags that parseFlags turns into config's fields.
type moreFlags struct {
	endpointHost, anonRole string
}

// newFlagSet defines edged's flags, into cfg and more; docs/flags.md
// describes each.
func newFlagSet(cfg *config, stderr io.Writer) (*flag.FlagSet, *moreFlags) {
	more := &moreFlags{}
	fs := flag.NewFlagSet("edged", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&cfg.showVersion, "version", false, "print \"edged <version>\" and exit")
	fs.StringVar(&cfg.listen, "listen", ":4840",
		"TCP `address` to listen on for OPC UA clients, host:port (an empty host or\n"+
			"0.0.0.0 / [::] means all interfaces; port 0 picks a free port)")
	fs.StringVar(&more.endpointHost, "endpoint-host", cfg.hostname,
		"host `name` (or IP) advertised in the endpoint URL opc.tcp://<name>:<port>.\n"+
			"If not given: the host of --listen when it names one, else this machine's host name")
	fs.IntVar(&cfg.maxSessions, "max-sessions", server.DefaultMaxSessions,
		"most OPC UA sessions at a time; CreateSession beyond it closes the oldest session\n"+
			"not activated yet, or with none gets BadTooManySessions")
	fs.IntVar(&cfg.maxConnections, "max-connections", server.DefaultMaxConnections,
		"most client TCP connections at a time; one more closes the oldest connection without\n"+
			"a session, or with none is answered with the UA-TCP error BadTcpNotEnoughResources")
	fs.BoolVar(&cfg.dataEfficient, "data-efficient", false,
		"leave Nagle's algorithm on (fewer, fuller TCP segments); by default TCP_NODELAY\n"+
			"is set for the lowest latency")
	fs.DurationVar(&cfg.readSpin, "read-spin", 0,
		"after answering a request, poll the connection this long for the next one before\n"+
			"blocking (e.g. 50us): a client that sends one request at a time gets its answer\n"+
			"sooner, at the cost of a busy core while it is connected; 0 blocks at once")
	fs.StringVar(&cfg.configFile, "config", "",
		"JSON configuration `file` (devices, tags, scan classes, board; see\n"+
			"docs/configuration.md), validated as a whole. Without it edged runs the built-in\n"+
			"simulated PLC (device sim) and simulated GPIO board (device io)")
	fs.StringVar(&cfg.importCSV, "import-csv", "",
		"CSV tag list `file` (a header row, then one row per tag) whose tags are added\n"+
			"to the device named by --csv-device before the configuration is validated")
	fs.StringVar(&cfg.csvDevice, "csv-device", "", "the device `name` that --import-csv adds its tags to")
	fs.StringVar(&cfg.board, "board", "",
		"board profile `name` (sim, rpi4, generic-armv7) replacing the configuration's board")
	fs.BoolVar(&cfg.checkConfig, "check-config", false,
		"validate the configuration (--config, --import-csv, --board), print the result and exit")
	fs.BoolVar(&cfg.configReplace, "config-replace", false,
		"store the configuration of --config, --import-csv, --board (or the simulator's) as a new\n"+
			"version and run it; without it, once the data folder holds a version, that runs")
	fs.DurationVar(&cfg.reportEvery, "report-every", 10*time.Second,
		"print the scan statistics (cycles, cycle time, start jitter, overruns) this often; 0: never")
	fs.StringVar(&cfg.dataDir, "data-dir", DefaultDataDir,
		"the `folder` of edged's certificates: own/, trusted/, issuers/, rejected/ (made at the first start)")
	fs.StringVar(&cfg.watchdog, "watchdog", "",
		"hardware watchdog `device` fed while the scan is healthy; default the board's (none on sim); none: no watchdog")
	fs.DurationVar(&cfg.watchdogTimeout, "watchdog-timeout", 10*time.Second, "the watchdog's timeout (whole seconds)")
	fs.IntVar(&cfg.rtPriority, "rt-priority", -1,
		"SCHED_FIFO `priority` (1..99) of the scan thread; -1: the board's (0 on sim); 0: normal scheduling")
	fs.IntVar(&cfg.rtCPU, "rt-cpu", -1, "the `CPU` the scan thread runs on; -1: the board's; -2: any")
	fs.DurationVar(&cfg.stallAfter, "test-stall-scan-after", 0,
		"TEST ONLY: stop the scan this long after the start, as a hung scan would, to prove the watchdog; 0: never")
	fs.BoolVar(&cfg.poller, "poller", false,
		"serve the connections between requests from one poller goroutine that answers their\n"+
			"reads and Publish requests in the same pass (fewer wake-ups); see docs/performance.md")
	fs.BoolVar(&cfg.simInMemory, "sim-in-memory", true,
		"poll the built-in simulator over an in-memory connection on the scan's goroutine; false: over loopback TCP,\n"+
			"as an outside Modbus client would (the slave listens there either way); see docs/simulator.md")
	fs.BoolVar(&cfg.allowInsecure, "allow-insecure", false,
		"offer SecurityPolicy None for sessions too (without: None serves discovery only); for tests and demos, never on a plant network")
	fs.StringVar(&cfg.mqtt, "mqtt", "",
		"publish every tag as a Sparkplug B edge node (group edged) to the MQTT broker at `URL` (tcp://host:1883),\n"+
			"when the configuration has no northbound section; see docs/sparkplug.md")
	fs.Var(&cfg.reverse, "reverse-connect",
		"connect to the OPC UA client listening at `URL` (opc.tcp://host:port) and let it open its session over that\n"+
			"socket (reverse connect, for a gateway whose firewall lets connections out only); repeatable, besides the\n"+
			"configuration's opcua.reverse_connect; see docs/security.md#reverse-connect")
	fs.StringVar(&more.anonRole, "anonymous-role", "Observer",
		"the `role` of anonymous sessions: Observer (browse, read, subscribe), Operator (also write and call), ..., or none (refused)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: edged [flags]\n       edged pki [--data-dir DIR] list|trust|reject|show-own ...\n       edged user [--data-dir DIR] add|list|passwd|remove ...\n\n"+
			"edged polls PLCs and serves their values over OPC UA.\n"+
			"Flags may be written with one or two dashes (-listen or --listen); docs/flags.md\n"+
			"describes each.\n\nFlags:\n")
		fs.PrintDefaults()
	}

	return fs, more
}

// check checks the flags' values and the ones that go together.
func (cfg *config) check(more *moreFlags) error {
	if r, ok := parseAnonymousRole(more.anonRole); ok {
		cfg.anonymous = r
	} else {
		return &usageError{msg: fmt.Sprintf("invalid value %q for --anonymous-role: want none or one of Observer, Operator, Engineer, Supervisor, ConfigureAdmin, SecurityAdmin", more.anonRole)}
	}
	if (cfg.importCSV == "") != (cfg.csvDevice == "") {
		return &usageError{msg: "--import-csv and --csv-device go together: the CSV file and the device its tags are added to"}
	}
	if cfg.reportEvery < 0 {
		return &usageError{msg: fmt.Sprintf("invalid value %v for --report-every: want 0 (never) or more", cfg.reportEvery)}
	}
	if cfg.maxSessions < 1 {
		return &usageError{msg: fmt.Sprintf("invalid value %d for --max-sessions: want at least 1", cfg.maxSessions)}
	}
	if cfg.maxConnections < 1 {
		return &usageError{msg: fmt.Sprintf("invalid value %d for --max-connections: want at least 1", cfg.maxConnections)}
	}
	if cfg.rtPriority < -1 || cfg.rtPriority > 99 {
		return &usageError{msg: fmt.Sprintf("invalid value %d for --rt-priority: want -1, 0, or 1 to 99", cfg.rtPriority)}
	}
	if cfg.rtCPU < -2 {
		return &usageError{msg: fmt.Sprintf("invalid value %d for --rt-cpu: want a CPU number, -1 or -2", cfg.rtCPU)}
	}
	if cfg.watchdogTimeout < time.Second || cfg.watchdogTimeout > time.Hour {
		return &usageError{msg: fmt.Sprintf("invalid value %v for --watchdog-timeout: want 1s to 1h", cfg.watchdogTimeout)}
	}
	if cfg.readSpin < 0 || cfg.readSpin > time.Second {
		return &usageError{msg: fmt.Sprintf("invalid value %v for --read-spin: want 0 to 1s", cfg.readSpin)}
	}

	return nil
}

// resolveHosts checks --listen and --endpoint-host and chooses the host
// the endpoint URL advertises.
func (cfg *config) resolveHosts(fs *flag.FlagSet, more *moreFlags) error {
	listenHost, err := checkListen(cfg.listen)
	if err != nil {
		return &usageError{msg: fmt.Sprintf("invalid value %q for --listen: %v", cfg.listen, err)}
	}

	explicit := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "endpoint-host" {
			explicit = true
		}
	})
	if explicit {
		h, err := checkEndpointHost(more.endpointHost)
		if err != nil {
			return &usageError{msg: fmt.Sprintf("invalid value %q for --endpoint-host: %v", more.endpointHost, err)}
		}
		if h == "" {
			explicit = false // --endpoint-host "" means "use the default"
		} else {
			more.endpointHost = h
		}
	}
	cfg.advertiseHost = resolveAdvertiseHost(listenHost, more.endpointHost, explicit, cfg.hostname)
	return nil
}

// usableHostname reports whether h is a host name that a client could
// look up: not empty, not the kernel's "(none)", not localhost.
func usableHostname(h string) bool {
	if h == "" || h == "localhost" || strings.HasPrefix(h, "localhost.") || len(h) > 253 {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// firstAddress is the first global unicast address of this machine's
// interfaces (IPv4 first), "127.0.0.1" when it has none.
func firstAddress() string {
	var v6 string
	for _, ip := range interfaceIPs() {
		if ip.To4() != nil {
			return ip.String()
		}
		if v6 == "" {
			v6 = ip.String()
		}
	}
	if v6 != "" {
		return v6
	}
	return "127.0.0.1"
}

// interfaceIPs are the global unicast addresses of the interfaces that
// are up.
func interfaceIPs() []net.IP {
	var out []net.IP
	ifs, _ := net.Interfaces()
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.IsGlobalUnicast() {
				out = append(out, n.IP)
			}
		}
	}
	return out
}

// checkListen validates a --listen value and returns its host part.
func checkListen(addr string) (host string, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		if ae, ok := err.(*net.AddrError); ok {
			return "", errors.New(ae.Err + " (want host:port, e.g. :4840 or 127.0.0.1:4840)")
		}
		return "", err
	}
	if port == "" {
		return "", errors.New("missing port (want host:port, e.g. :4840)")
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	if strings.ContainsAny(host, " \t/") {
		return "", fmt.Errorf("host %q is not a host name or IP address", host)
	}
	return host, nil
}

// checkEndpointHost validates an --endpoint-host value and returns it
// normalised: surrounding space trimmed, brackets around an IPv6 literal
// removed.
func checkEndpointHost(h string) (string, error) {
	h = strings.TrimSpace(h)
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
		if !isIPv6(h) {
			return "", errors.New("brackets are only for IPv6 addresses")
		}
	}
	if h == "" {
		return "", nil
	}
	if strings.ContainsAny(h, " \t/?#@[]") {
		return "", errors.New("want a bare host name or IP address, without scheme, port or path")
	}
	if strings.Contains(h, ":") && !isIPv6(h) {
		return "", errors.New("want a bare host name or IP address, without a port")
	}
	return h, nil
}

// resolveAdvertiseHost decides which host goes into the endpoint URL:
// an explicitly given --endpoint-host wins; otherwise the host of --listen
// when it is a specific (non-wildcard) host; otherwise this machine's name.
func resolveAdvertiseHost(listenHost, endpointHost string, endpointHostExplicit bool, hostname string) string {
	if endpointHostExplicit {
		return endpointHost
	}
	if !isWildcard(listenHost) {
		return listenHost
	}
	return hostname
}

// isWildcard reports whether a listen host means "all interfaces".
func isWildcard(host string) bool {
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

func isIPv6(h string) bool {
	if i := strings.IndexByte(h, '%'); i >= 0 { // zone, e.g. fe80::1%eth0
		h = h[:i]
	}
	ip := net.ParseIP(h)
	return ip != nil && strings.Contains(h, ":")
}

// endpointURL is the URL an OPC UA client connects to: opc.tcp://host:port,
// with IPv6 literals bracketed and a zone's '%' escaped as in RFC 6874.
func endpointURL(host string, port int) string {
	if isIPv6(host) {
		host = strings.Replace(host, "%", "%25", 1)
	}
	return "opc.tcp://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// urlList is a repeatable flag's URLs.
type urlList []string

func (l *urlList) String() string { return strings.Join(*l, ",") }

func (l *urlList) Set(s string) error {
	if err := pconfig.CheckReverseURL(s); err != nil {
		return err
	}
	*l = append(*l, s)
	return nil
}
