package movielens

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"goldstone/models"
	"goldstone/stages"
	"goldstone/stages/settings"
)

// registeredLikelihood is the decoded value of likelihood = name.
func registeredLikelihood(t *testing.T, name string) Likelihood {
	t.Helper()
	doc := "[experiments.p]\npipeline = \"movielens\"\n[experiments.p.settings]\nlikelihood = " + strconv.Quote(name) + "\n"
	c, err := stages.ParseConfig("t.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return settings.MustDecode[ModelSettings](c.Experiments["p"].Trials()[0].Settings).Likelihood
}

// TestModelSeam: the pipeline reaches its ratings models only through the
// seam (Likelihood, models.RatingsModel). Outside the RegisterChoice
// ("likelihood", ...) lines, its code (comments aside) names no registered
// likelihood's settings type nor the model type it builds, and each
// likelihood is registered by exactly one line. So adding a likelihood is
// its file in models/ and one registration line, and Train and Evaluate
// cannot come to depend on one model again.
func TestModelSeam(t *testing.T) {
	names := settings.ChoiceNames("likelihood")
	for _, want := range []string{"logistic", "gaussian", "poisson"} {
		if !slices.Contains(names, want) {
			t.Fatalf("likelihoods %v: no %s", names, want)
		}
	}
	specific := map[string]string{} // models' type name -> the likelihood it belongs to
	for _, name := range names {
		l := registeredLikelihood(t, name)
		specific[reflect.TypeOf(l).Name()] = name
		mt := reflect.TypeOf(l.New(models.RatingsSpec{}))
		if mt.Kind() == reflect.Pointer {
			mt = mt.Elem()
		}
		if mt.PkgPath() != "goldstone/models" {
			t.Errorf("likelihood %s builds %v, want a type of goldstone/models", name, mt)
		}
		specific[mt.Name()] = name
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	registered := map[string]int{} // settings type name -> registration lines
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0) // comments may name models
		if err != nil {
			t.Fatal(err)
		}
		allowed := map[*ast.SelectorExpr]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isSelector(call.Fun, "settings", "RegisterChoice") || len(call.Args) != 3 {
				return true
			}
			if key, ok := call.Args[0].(*ast.BasicLit); !ok || key.Value != `"likelihood"` {
				return true
			}
			if lit, ok := call.Args[2].(*ast.CompositeLit); ok {
				if sel, ok := lit.Type.(*ast.SelectorExpr); ok && isSelector(sel, "models", sel.Sel.Name) {
					allowed[sel] = true
					registered[sel.Sel.Name]++
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || allowed[sel] || !isSelector(sel, "models", sel.Sel.Name) {
				return true
			}
			if l, ok := specific[sel.Sel.Name]; ok {
				t.Errorf("%s: models.%s (likelihood %s) outside its registration: reach ratings models through Likelihood and models.RatingsModel",
					fset.Position(sel.Pos()), sel.Sel.Name, l)
			}
			return true
		})
	}
	for _, name := range names {
		typ := reflect.TypeOf(registeredLikelihood(t, name)).Name()
		if registered[typ] != 1 {
			t.Errorf("likelihood %s: %d RegisterChoice(\"likelihood\", ..., models.%s{}) lines, want 1", name, registered[typ], typ)
		}
	}
}

// isSelector reports whether e is pkg.name.
func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}
