package pipelines_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest function (from its func keyword to its
// closing brace) outside tests and generated code.
const maxFuncLines = 100

// longFuncs are the functions allowed to be longer, each with the reason.
// An entry whose function got shorter fails the test: remove it.
var longFuncs = map[string]string{
	"optim/detmath.go Pow": "a line-for-line transcription of Go's math.Pow (pow.go) on the deterministic Exp and Log; " +
		"split, it would no longer read against its source",
	"stages/figures/trajectories.go Trajectories": "issue 21 (figures fit for a paper) rewrites it; split it there",
	"stages/figures/histogram.go Histogram":       "issue 21 (figures fit for a paper) rewrites it; split it there",
	"cmd/runner/cmd_results.go runResults":        "issue 21 (never in results) rewrites it; split it there",
}

// TestFunctionLength measures every function of the module with go/ast:
// none is over maxFuncLines lines but those of longFuncs.
func TestFunctionLength(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "work" || name == "data") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			key := filepath.ToSlash(rel) + " " + fn.Name.Name
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if _, allowed := longFuncs[key]; allowed {
				seen[key] = n > maxFuncLines
				continue
			}
			if n > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines (at most %d): split it", rel, fset.Position(fn.Pos()).Line, fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range longFuncs {
		if !seen[key] {
			t.Errorf("longFuncs: %s is no longer over %d lines (or gone): remove its entry", key, maxFuncLines)
		}
	}
}

// TestInternalPackagesAreLeaves: a package of internal/ is a leaf utility
// and imports nothing of the module but other internal packages, so that
// nothing lives below the layers it would need.
func TestInternalPackagesAreLeaves(t *testing.T) {
	imports, err := moduleImports(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for dir, imp := range imports {
		if !strings.HasPrefix(dir, "internal/") {
			continue
		}
		for _, p := range imp {
			if !strings.HasPrefix(p, "internal/") {
				t.Errorf("%s imports %s: internal/ holds only leaf utilities; move the package above what it imports", dir, p)
			}
		}
	}
}
