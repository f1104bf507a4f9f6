package experiment_test

import (
	"bytes"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"goldstone/experiment/settings"
)

// TestNoSettingReadByName type-checks every package of the module and
// fails where code reads a setting by its name: an index of a
// settings.Values outside package settings that is not the target of an
// assignment (the config decoder writes values by key; everything else
// reads a setting through the struct that declares it, settings.Decode).
// Test files are scanned for .Settings["name"]. settings.Values has no
// methods that take a name either (Int, Float, String... were deleted).
func TestNoSettingReadByName(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module (-short)")
	}
	if m := reflect.TypeFor[settings.Values](); m.NumMethod() != 1 || m.Method(0).Name != "Clone" {
		t.Errorf("settings.Values has methods beyond Clone: a setting read by name would come back")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Dir}}\t{{join .GoFiles \",\"}}\t{{join .TestGoFiles \",\"}}\t{{join .XTestGoFiles \",\"}}", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	type pkg struct{ path, dir, files, tests string }
	var ours []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		exports[f[0]] = f[1]
		if f[0] == "goldstone" || strings.HasPrefix(f[0], "goldstone/") {
			ours = append(ours, pkg{f[0], f[2], f[3], f[4] + "," + f[5]})
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	for _, p := range ours {
		var files []*ast.File
		for _, name := range strings.Split(p.files, ",") {
			if name == "" {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(p.dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(p.path, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", p.path, err)
		}
		if p.path != "goldstone/experiment/settings" {
			for _, f := range files {
				checkReads(t, fset, f, info)
			}
		}
		for _, name := range strings.Split(p.tests, ",") {
			if name == "" {
				continue
			}
			scanTestFile(t, fset, filepath.Join(p.dir, name))
		}
	}
}

// checkReads reports index expressions on settings.Values that are not
// assignment targets.
func checkReads(t *testing.T, fset *token.FileSet, f *ast.File, info *types.Info) {
	t.Helper()
	writes := map[ast.Expr]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok {
			for _, l := range as.Lhs {
				writes[l] = true
			}
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		ix, ok := n.(*ast.IndexExpr)
		if !ok || writes[ix] {
			return true
		}
		if named, ok := info.TypeOf(ix.X).(*types.Named); ok && named.Obj().Pkg() != nil &&
			named.Obj().Pkg().Path() == "goldstone/experiment/settings" && named.Obj().Name() == "Values" {
			t.Errorf("%s: a setting read by name (index of settings.Values): decode the settings struct that declares it (settings.Decode)", fset.Position(ix.Pos()))
		}
		return true
	})
}

// scanTestFile reports X.Settings["name"] in a test file.
func scanTestFile(t *testing.T, fset *token.FileSet, path string) {
	t.Helper()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		ix, ok := n.(*ast.IndexExpr)
		if !ok {
			return true
		}
		sel, ok := ix.X.(*ast.SelectorExpr)
		lit, isLit := ix.Index.(*ast.BasicLit)
		if ok && sel.Sel.Name == "Settings" && isLit && lit.Kind == token.STRING {
			t.Errorf("%s: a setting read by name (.Settings[%s]): decode the settings struct that declares it", fset.Position(ix.Pos()), lit.Value)
		}
		return true
	})
}
