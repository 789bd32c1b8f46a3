package main

import (
	"errors"
	"fmt"
	"os"

	pconfig "github.com/edged/edged/plc/config"
)

// configError is a configuration that cannot be used (unreadable, not
// JSON, invalid): main reports it and exits with code 2, as for a bad
// command line.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// loadConfig returns the configuration edged runs: the --config file, or
// the built-in simulator's (pconfig.Simulator) without one; then the tags
// of --import-csv added to --csv-device and the --board override; then
// validated as a whole. Its errors are *configError, naming the file and,
// for an invalid configuration, every problem by device, tag and field.
func loadConfig(cfg config) (*pconfig.Config, error) {
	var c *pconfig.Config
	where := "the built-in simulator's configuration"
	if cfg.configFile != "" {
		where = "--config " + cfg.configFile
		var err error
		c, err = pconfig.Load(cfg.configFile)
		var ve *pconfig.ValidationError
		if err != nil && !(errors.As(err, &ve) && c != nil) {
			return nil, &configError{fmt.Errorf("%s: %w", where, err)}
		}
		// An invalid file is validated again below, with the CSV's tags
		// and the board override, so that every problem is reported once.
	} else {
		sc := pconfig.Simulator()
		c = &sc
	}
	if cfg.importCSV != "" {
		where += " with --import-csv " + cfg.importCSV
		f, err := os.Open(cfg.importCSV)
		if err != nil {
			return nil, &configError{fmt.Errorf("--import-csv: %w", err)}
		}
		err = c.ImportCSV(f, cfg.csvDevice)
		f.Close()
		if err != nil {
			return nil, &configError{fmt.Errorf("--import-csv %s into device %q: %w", cfg.importCSV, cfg.csvDevice, err)}
		}
	}
	if cfg.board != "" {
		where += " with --board " + cfg.board
		c.Board = cfg.board
	}
	if err := c.Validate(); err != nil {
		return nil, &configError{fmt.Errorf("%s: %w", where, err)}
	}
	return c, nil
}
