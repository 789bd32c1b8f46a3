// Package atomicfile writes files so that a reader, or the next boot after
// a power loss, sees either the old content or the new, never a part.
package atomicfile

import (
	"os"
	"path/filepath"
)

// WriteFile writes data to path with perm: into a temporary file in the
// same folder, synced, renamed over path, and the folder synced. The
// temporary file has perm from its creation, so a key is never readable
// by others, not even for a moment.
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// CreateTemp makes the file 0600; perm may be stricter or wider.
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
