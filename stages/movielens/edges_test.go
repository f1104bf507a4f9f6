package movielens

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocateGzipInDirectory(t *testing.T) {
	dir := t.TempDir()
	want := writeFile(t, filepath.Join(dir, "ratings.dat.gz"), gzipBytes(t, []byte("1::1::1::1\n")))
	got, err := Locate(t.TempDir(), dir)
	if err != nil || got != want {
		t.Fatalf("Locate(dir with ratings.dat.gz) = %q, %v; want %q", got, err, want)
	}
}

func TestLocateCompressedParquetRelative(t *testing.T) {
	dir := t.TempDir()
	want := writeFile(t, filepath.Join(dir, "ratings.csv.zst"), zstdBytes(t, []byte("userId,movieId,rating,timestamp\n1,1,1,1\n")))
	if got, err := Locate(t.TempDir(), dir); err != nil || got != want {
		t.Errorf("Locate(dir with ratings.csv.zst) = %q, %v; want %q", got, err, want)
	}
	pdir := t.TempDir()
	want = writeFile(t, filepath.Join(pdir, "ratings.parquet"), []byte("PAR1"))
	if got, err := Locate(t.TempDir(), pdir); err != nil || got != want {
		t.Errorf("Locate(dir with ratings.parquet) = %q, %v; want %q", got, err, want)
	}
	data := t.TempDir()
	os.MkdirAll(filepath.Join(data, "mine"), 0o755)
	want = writeFile(t, filepath.Join(data, "mine", "log.tsv"), []byte("x"))
	if got, err := Locate(data, filepath.Join("mine", "log.tsv")); err != nil || got != want {
		t.Errorf("Locate(data, mine/log.tsv) = %q, %v; want %q", got, err, want)
	}
	if _, err := Locate(data, "absent.csv"); err == nil || !strings.Contains(err.Error(), filepath.Join(data, "absent.csv")) {
		t.Errorf("Locate of a missing relative path: %v, want it to name where it looked", err)
	}
}
