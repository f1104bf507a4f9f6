package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCollectNeedsTheDatabase: collect on a database path that does not
// exist (a host that cannot see it, a typo) fails with one line and
// creates nothing there. Before, it created an empty database and then
// failed with "run 1: runs: not found".
func TestCollectNeedsTheDatabase(t *testing.T) {
	e := newEnv(t)
	db := filepath.Join(e.dir, "elsewhere", "results.db")
	os.MkdirAll(filepath.Dir(db), 0o755)
	_, errs, code := e.run("collect", "--run", "1", "--db", db)
	if code != 2 || !strings.Contains(errs, "no such results database") {
		t.Errorf("collect on a missing database: exit %d: %s", code, errs)
	}
	if ents, _ := os.ReadDir(filepath.Dir(db)); len(ents) != 0 {
		t.Errorf("collect left %v behind", ents)
	}
}
