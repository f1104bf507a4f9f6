package experiment

// InputLimits are the data settings that bound what an ingest stage reads of a
// compressed data file, so that a decompression bomb stops with an error naming the
// file and the setting instead of filling the memory or the disk. They are in no
// cache key and no trial id: they decide whether an ingest may finish, never what it
// writes.
type InputLimits struct {
	Bytes int `set:"max_input_bytes" default:"0" check:">=0" doc:"the most bytes a gzip or zstd data file may decompress to (0: 100 times its compressed size, at least 64 MiB); reading stops with an error naming the file beyond it"`
}

// PruneKeys leaves the limits out of every key.
func (InputLimits) PruneKeys(m map[string]any) { delete(m, "max_input_bytes") }
