package pipelines_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLayers checks the rooms of the module (issue 29): stages/ holds
// only pipeline packages and their list (stages/pipelines, which imports
// each); only that list imports a pipeline package, so no pipeline reaches
// into another, no report, format or library reaches sideways into one,
// and cmd/ links them all through the list alone (and reaches models and
// data formats only through them); nothing under internal/
// imports upward; and no top-level folder holds more than a quarter of
// the non-test Go lines.
func TestLayers(t *testing.T) {
	root := filepath.Join("..", "..")
	imports, err := moduleImports(root)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := goLines(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range layerViolations(imports, lines) {
		t.Error(msg)
	}
}

// layerViolations returns what breaks the rules of TestLayers, given each
// package's module imports (by directory) and each directory's non-test
// Go lines.
func layerViolations(imports map[string][]string, lines map[string]int) []string {
	const list = "stages/pipelines"
	var out []string
	isPipeline := func(p string) bool { return strings.HasPrefix(p, "stages/") && p != list }
	for _, p := range slices.Sorted(maps.Keys(imports)) {
		if isPipeline(p) && strings.Count(p, "/") != 1 {
			out = append(out, fmt.Sprintf("%s: stages/ holds pipeline packages only, one level deep", p))
		}
		if isPipeline(p) && !slices.Contains(imports[list], p) {
			out = append(out, fmt.Sprintf("%s: a package under stages/ that %s does not import is no pipeline: move it to the room of its job", p, list))
		}
		for _, q := range imports[p] {
			switch {
			case isPipeline(q) && p != list:
				out = append(out, fmt.Sprintf("%s imports pipeline package %s: only %s may (ask the pipeline through an interface of experiment's registry)", p, q, list))
			case strings.HasPrefix(p, "cmd/") && (strings.HasPrefix(q, "models") || strings.HasPrefix(q, "formats")):
				out = append(out, fmt.Sprintf("%s imports %s: the command line reaches models and data formats through the pipelines' interfaces", p, q))
			case strings.HasPrefix(p, "internal/") && !strings.HasPrefix(q, "internal/"):
				out = append(out, fmt.Sprintf("%s imports %s: internal/ imports only internal/", p, q))
			}
		}
	}
	total := 0
	top := map[string]int{}
	for dir, n := range lines {
		total += n
		top[strings.SplitN(dir, "/", 2)[0]] += n
	}
	for _, d := range slices.Sorted(maps.Keys(top)) {
		if 4*top[d] > total {
			out = append(out, fmt.Sprintf("%s/ holds %d of %d non-test Go lines, more than a quarter", d, top[d], total))
		}
	}
	return out
}

// goLines counts the lines of the non-test Go files of each package
// directory under root (the directories moduleImports reads).
func goLines(root string) (map[string]int, error) {
	out := map[string]int{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (strings.HasPrefix(name, ".") || name == "work" || name == "data" || name == "reports" ||
			name == "testdata" && filepath.ToSlash(p) != filepath.ToSlash(filepath.Join(root, "internal", "testdata"))) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		out[filepath.ToSlash(rel)] += bytes.Count(b, []byte("\n"))
		return nil
	})
	return out, err
}

// The rules catch each kind of break (the layout before issue 29 had all
// but the last).
func TestLayerViolations(t *testing.T) {
	imports := map[string][]string{
		"stages/pipelines":  {"stages/artificial", "stages/dwe"},
		"stages/artificial": {"experiment"},
		"stages/dwe":        {"stages/artificial"},
		"stages/settings":   nil,
		"report/claims":     {"stages/artificial"},
		"cmd/runner":        {"stages/dwe", "stages/pipelines", "models/dwe"},
		"internal/fault":    {"runs"},
	}
	lines := map[string]int{"stages/dwe": 60, "runs": 20, "cmd/runner": 20}
	got := strings.Join(layerViolations(imports, lines), "\n")
	for _, want := range []string{
		"stages/settings: a package under stages/ that stages/pipelines does not import",
		"stages/dwe imports pipeline package stages/artificial",
		"report/claims imports pipeline package stages/artificial",
		"cmd/runner imports pipeline package stages/dwe",
		"cmd/runner imports models/dwe",
		"internal/fault imports runs",
		"stages/ holds 60 of 100 non-test Go lines",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no violation %q in:\n%s", want, got)
		}
	}
	if v := layerViolations(map[string][]string{"stages/pipelines": {"stages/dwe"}, "stages/dwe": {"experiment"}, "cmd/runner": {"stages/pipelines"}},
		map[string]int{"a": 1, "b": 1, "c": 1, "d": 1}); len(v) != 0 {
		t.Errorf("a good layout: %v", v)
	}
}
