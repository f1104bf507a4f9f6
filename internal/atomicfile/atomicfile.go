// Package atomicfile writes files so that a reader never sees a half-written
// one: the data goes to a temporary file in the destination's directory,
// created with the mode of an ordinary new file (0666 less the umask), which
// is synced and renamed into place only when the write succeeded; otherwise
// it is removed. A temporary name carries its process's id, so what a
// killed process left behind is found and removed later (RemoveStale).
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"goldstone/internal/fault"
)

// File is a temporary file renamed to its destination by Commit.
type File struct {
	*os.File
	dst  string
	done bool
}

// Create starts writing dst. Like os.WriteFile it does not create dst's
// directory: a missing one is an error.
func Create(dst string) (*File, error) {
	f, err := CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", dst, err)
	}
	return &File{File: f, dst: dst}, nil
}

// Commit syncs and closes the file and renames it onto its destination.
// On error the temporary file is removed.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("write %s: already committed or aborted", f.dst)
	}
	f.done = true
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		fault.Point("atomicfile:" + filepath.Base(f.dst)) // complete, not yet in place
		err = os.Rename(f.Name(), f.dst)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", f.dst, err)
	}
	return nil
}

// Abort closes and removes the temporary file; after Commit it does nothing,
// so `defer f.Abort()` is safe.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// Write writes dst atomically through a buffered writer; write produces the
// content. An error of write is returned as it is (it names what failed);
// errors of the file itself name dst.
func Write(dst string, write func(w io.Writer) error) error {
	f, err := Create(dst)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return f.Commit()
}

// WriteFile writes data to dst atomically (unbuffered: data is in memory
// already).
func WriteFile(dst string, data []byte) error {
	f, err := Create(dst)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return f.Commit()
}
