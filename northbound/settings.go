package northbound

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/edged/edged/plc/config"
)

// settings are a Sparkplug section resolved: the files read, the
// defaults filled in.
type settings struct {
	brokers     []string
	group, node string
	clientID    string
	username    string
	password    []byte
	tls         *tls.Config
	keepAlive   time.Duration
	primaryHost string
	minInterval time.Duration
	replayRate  int
	role        string // "" : DCMD writes refused
	// tags: nil for every tag; else the published ones by device.name, with
	// their deadbands.
	tags map[string]float64
	// files is what the files said, to tell a change of them from none.
	files string
}

// resolve reads what s names (the password, the TLS files) and fills in
// the defaults. Its errors name the field.
func resolve(s *config.Sparkplug) (*settings, error) {
	st := &settings{
		brokers: slices.Clone(s.Brokers), group: s.GroupID, node: s.EdgeNodeID, clientID: s.ClientID,
		username: s.Username, keepAlive: time.Duration(s.KeepAliveS) * time.Second,
		primaryHost: s.PrimaryHost, minInterval: time.Duration(s.MinIntervalMs) * time.Millisecond,
		replayRate: s.ReplayRate,
	}
	if st.node == "" {
		h, err := os.Hostname()
		if err != nil || !config.SparkplugID(h) {
			return nil, fmt.Errorf("northbound.sparkplug.edge_node_id: absent, and the host name %q cannot stand for it", h)
		}
		st.node = h
	}
	if st.clientID == "" {
		st.clientID = "edged-" + st.group + "-" + st.node
	}
	if s.Commands != nil {
		st.role = s.Commands.Role
	}
	if s.Tags != nil {
		st.tags = make(map[string]float64, len(s.Tags))
		for _, t := range s.Tags {
			st.tags[t.Device+"."+t.Name] = t.Deadband
		}
	}
	var files strings.Builder
	if s.PasswordFile != "" {
		b, err := readSecret(s.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("northbound.sparkplug.password_file: %w", err)
		}
		st.password = []byte(strings.TrimRight(string(b), "\r\n"))
		files.Write(b)
	}
	if t := s.TLS; t != nil {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
		if t.CAFile != "" {
			pem, err := os.ReadFile(t.CAFile)
			if err != nil {
				return nil, fmt.Errorf("northbound.sparkplug.tls.ca_file: %w", err)
			}
			tc.RootCAs = x509.NewCertPool()
			if !tc.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("northbound.sparkplug.tls.ca_file: %s holds no PEM certificate", t.CAFile)
			}
			files.Write(pem)
		}
		if t.CertFile != "" {
			key, err := readSecret(t.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("northbound.sparkplug.tls.key_file: %w", err)
			}
			cert, err := os.ReadFile(t.CertFile)
			if err != nil {
				return nil, fmt.Errorf("northbound.sparkplug.tls.cert_file: %w", err)
			}
			pair, err := tls.X509KeyPair(cert, key)
			if err != nil {
				return nil, fmt.Errorf("northbound.sparkplug.tls: cert_file %s and key_file %s: %w", t.CertFile, t.KeyFile, err)
			}
			tc.Certificates = []tls.Certificate{pair}
			files.Write(cert)
			files.Write(key)
		}
		st.tls = tc
	}
	st.files = files.String()
	return st, nil
}

// readSecret reads a file that holds a secret, refusing one that others
// than its owner may read.
func readSecret(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: mode %#o; a secret's file must be 0600 (chmod 600 %s)", name, fi.Mode().Perm(), name)
	}
	const maxSecret = 1 << 20
	b, err := io.ReadAll(io.LimitReader(f, maxSecret+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSecret {
		return nil, errors.New("larger than 1 MiB")
	}
	return b, nil
}

// sameSession reports whether a and b connect alike: a change of any of
// these makes the node reconnect; of the others, rebirth.
func sameSession(a, b *settings) bool {
	return slices.Equal(a.brokers, b.brokers) && a.group == b.group && a.node == b.node &&
		a.clientID == b.clientID && a.username == b.username && a.files == b.files &&
		a.keepAlive == b.keepAlive && a.primaryHost == b.primaryHost &&
		(a.tls == nil) == (b.tls == nil) && (a.tls == nil || a.tls.ServerName == b.tls.ServerName)
}
