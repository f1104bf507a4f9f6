package main

// Failure paths, round 3: bad and hostile input, end to end.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Item 7: a gzip bomb stops the ingest at max_input_bytes with one line naming the file
// and the setting, exit 2, its trials pending; raised, the same command ingests it.
func TestDecompressionBombStops(t *testing.T) {
	rows := "userId,movieId,rating,timestamp\n" + strings.Repeat("1,1,5,1000000000\n", 1<<19) // 8.9 MB, 18 KB of gzip
	bomb := filepath.Join(t.TempDir(), "bomb.csv.gz")
	if err := os.WriteFile(bomb, gz(t, []byte(rows)), 0o644); err != nil {
		t.Fatal(err)
	}
	e := mlDataEnv(t, bomb)
	_, errs, code := e.run("--experiment", "mlbad", "--quiet", "--set", "max_input_bytes=1048576")
	line := errorLine(t, errs)
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("exit %d, want 2 and one line:\n%s", code, errs)
	}
	for _, w := range []string{bomb, "larger than 1048576 bytes", "max_input_bytes"} {
		if !strings.Contains(line, w) {
			t.Errorf("%q does not say %q", line, w)
		}
	}
	if got := e.trialStatuses(1); got["pending"] != 3 {
		t.Errorf("trials %v, want 3 pending", got)
	}
}
