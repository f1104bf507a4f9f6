package slurmexec

import (
	"io/fs"
	"path/filepath"
)

// Resources per task, derived from the bytes of a trial's inputs (the data
// set after the shared stages) when the experiment does not set them: the
// models hold their data and a few parameter-sized buffers in memory, a
// small multiple of their inputs; cores help once there is enough to split.
func derive(inputBytes int64) (cpus, memMB int) {
	const mib = 1 << 20
	mem := 512 + 8*inputBytes/mib
	memMB = int((mem + 255) / 256 * 256)
	switch {
	case inputBytes < 16*mib:
		cpus = 1
	case inputBytes < 256*mib:
		cpus = 2
	case inputBytes < 2048*mib:
		cpus = 4
	default:
		cpus = 8
	}
	return cpus, memMB
}

// sizeOf is the total size of the files under path (a file or directory).
func sizeOf(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
