package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"goldstone/internal/fault"
)

// batchSyncs is how many fsyncs a Batch keeps in flight: the file system
// commits concurrent ones together, so many small files are synced in
// about the time of a few (on the development machine's disk, 1,000 files
// in 0.35 s instead of 5 s one after the other).
const batchSyncs = 32

// Batch writes many files, each atomically as WriteFile does, with far
// fewer waits for the disk: Add writes a file to its temporary name
// (unsynced, closed at once, so a batch holds no descriptors); Commit
// syncs every temporary file, batchSyncs at a time, and then renames each
// onto its destination, in the order they were added. A reader sees each
// destination whole or not at all; a process killed before Commit's
// renames leaves only temporary files, which carry its pid
// (RemoveStale). The zero Batch is ready to use; it is not safe for
// concurrent use.
type Batch struct {
	tmp, dst []string
}

// Add writes data to a temporary file beside dst. Like WriteFile it does
// not create dst's directory.
func (b *Batch) Add(dst string, data []byte) error {
	f, err := CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", dst, err)
	}
	b.tmp, b.dst = append(b.tmp, f.Name()), append(b.dst, dst)
	return nil
}

// Len is the number of files added and not yet committed.
func (b *Batch) Len() int { return len(b.dst) }

// Commit syncs the files added since the last Commit and renames them
// into place. On error the files not yet in place are removed, and the
// error names the first file that failed.
func (b *Batch) Commit() error {
	tmp, dst := b.tmp, b.dst
	b.tmp, b.dst = nil, nil
	errs := make([]error, len(tmp))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(batchSyncs, len(tmp)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = syncFile(tmp[i])
			}
		})
	}
	for i := range tmp {
		next <- i
	}
	close(next)
	wg.Wait()
	for i := range tmp {
		err := errs[i]
		if err == nil {
			fault.Point("atomicfile:" + filepath.Base(dst[i])) // complete, not yet in place
			err = os.Rename(tmp[i], dst[i])
		}
		if err != nil {
			for _, t := range tmp[i:] {
				os.Remove(t)
			}
			return fmt.Errorf("write %s: %w", dst[i], err)
		}
	}
	return nil
}

// Abort removes the temporary files of the files added since the last
// Commit; `defer b.Abort()` is safe after Commit.
func (b *Batch) Abort() {
	for _, t := range b.tmp {
		os.Remove(t)
	}
	b.tmp, b.dst = nil, nil
}

// syncFile flushes a closed file's data to the disk.
func syncFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}
