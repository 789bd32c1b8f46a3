package config

import (
	"fmt"
	"net/url"
)

// OPCUA configures the OPC UA server beyond its flags.
type OPCUA struct {
	// ReverseConnect are clients the server connects to (OPC 10000-6
	// §7.1.3 reverse connect): for a gateway behind a firewall that lets
	// connections out only. Applied live.
	ReverseConnect []ReverseConnect `json:"reverse_connect,omitempty"`
}

// ReverseConnect is a client listening for reverse connections.
type ReverseConnect struct {
	// URL is where the client listens: opc.tcp://host:port.
	URL string `json:"url"`
	// MaxConnections bounds the connections to this client at a time,
	// 1..MaxReverseConnections (0 or absent: 4).
	MaxConnections int `json:"max_connections,omitempty"`
}

// Bounds of the opcua section.
const (
	MaxReverseTargets     = 32
	MaxReverseConnections = 64
)

func (v *validator) opcua(c *Config) {
	if c.OPCUA == nil {
		return
	}
	rc := c.OPCUA.ReverseConnect
	if len(rc) > MaxReverseTargets {
		v.add("opcua.reverse_connect", "%d clients, more than %d", len(rc), MaxReverseTargets)
	}
	seen := map[string]int{}
	for i, r := range rc {
		p := fmt.Sprintf("opcua.reverse_connect[%d]", i)
		if err := CheckReverseURL(r.URL); err != nil {
			v.add(p+".url", "%v", err)
		} else if j, ok := seen[r.URL]; ok {
			v.add(p+".url", "%q is also opcua.reverse_connect[%d]", r.URL, j)
		} else {
			seen[r.URL] = i
		}
		if r.MaxConnections != 0 {
			v.intRange(p+".max_connections", r.MaxConnections, 1, MaxReverseConnections, " (absent: 4)")
		}
	}
}

// CheckReverseURL checks a reverse-connect client's URL: opc.tcp://host:port.
func CheckReverseURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return fmt.Errorf("missing (e.g. \"opc.tcp://scada:4844\")")
	case err != nil:
		return fmt.Errorf("%q is not a URL", raw)
	case u.Scheme != "opc.tcp":
		return fmt.Errorf("%q: the scheme is not opc.tcp", raw)
	case u.Hostname() == "" || u.Port() == "" || u.Path != "" && u.Path != "/" || u.User != nil || u.RawQuery != "":
		return fmt.Errorf("%q: want opc.tcp://host:port", raw)
	}
	return nil
}
