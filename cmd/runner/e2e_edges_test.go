package main

// Rough edges of issue 9 in the ratings readers.

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Rough edges of the ratings readers.
func TestRatingsFileEdges(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("header only", func(t *testing.T) {
		p := write("header/ratings.csv", []byte("userId,movieId,rating,timestamp\n"))
		_, errs, code := mlDataEnv(t, p).run("--experiment", "mlbad", "--quiet")
		if code != 2 || !strings.Contains(errs, p) || !strings.Contains(errs, "no ratings") {
			t.Errorf("exit %d, want 2 naming %s and 'no ratings': %s", code, p, errs)
		}
	})
	var dat bytes.Buffer
	for i, l := range strings.Split(string(syntheticRatings(400)), "\r\n")[1:] {
		if l == "" {
			continue
		}
		f := strings.Split(l, ",")
		fmt.Fprintf(&dat, "%s::%s::%d::%s\n", f[0], f[1], 1+i%5, f[3])
	}
	t.Run("ratings.dat.gz in a directory", func(t *testing.T) {
		var gz bytes.Buffer
		w := gzip.NewWriter(&gz)
		w.Write(dat.Bytes())
		w.Close()
		write("gzdir/ratings.dat.gz", gz.Bytes())
		out, errs, code := mlDataEnv(t, filepath.Join(dir, "gzdir")).run("--experiment", "mlbad", "--set", "seed=1", "--quiet")
		if code != 0 {
			t.Errorf("exit %d\n%s\n%s", code, out, errs)
		}
	})
	t.Run("blank first line", func(t *testing.T) {
		p := write("blank/ratings.dat", append([]byte("\n"), dat.Bytes()...))
		out, errs, code := mlDataEnv(t, p).run("--experiment", "mlbad", "--set", "seed=1", "--quiet")
		if code != 0 {
			t.Errorf("exit %d\n%s\n%s", code, out, errs)
		}
	})
	t.Run("BOM in u.data", func(t *testing.T) {
		u := strings.ReplaceAll(dat.String(), "::", "\t")
		p := write("bom/u.data", append([]byte{0xEF, 0xBB, 0xBF}, u...))
		out, errs, code := mlDataEnv(t, p).run("--experiment", "mlbad", "--set", "seed=1", "--quiet")
		if code != 0 {
			t.Errorf("exit %d\n%s\n%s", code, out, errs)
		}
	})
}
