package movielens

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/models"
	"goldstone/optim"
)

// registeredLikelihood is the decoded value of likelihood = name.
func registeredLikelihood(t *testing.T, name string) Likelihood {
	t.Helper()
	doc := "[experiments.p]\npipeline = \"movielens\"\n[experiments.p.settings]\nlikelihood = " + strconv.Quote(name) + "\n"
	c, err := experiment.ParseConfig("t.toml", []byte(doc))
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

// TestModelSeamContract: every registered likelihood builds a model that
// trains and evaluates through models.RatingsModel alone on ratings with
// its labels: its parameters are the blocks and its arrays, its held-out
// metrics start with "ll" and name every metric of its baseline (the
// pipeline reports test_<name> beside baseline_test_<name>).
func TestModelSeamContract(t *testing.T) {
	for _, name := range settings.ChoiceNames("likelihood") {
		l := registeredLikelihood(t, name)
		r := &models.Ratings{}
		for k := range 60 {
			t32, u, i := int32(k%2), int32(k%5), int32(k%4)
			if l.Labels() == models.Binary {
				r.Append(t32, u, i, int8(1-2*(k%3%2)))
			} else {
				r.AppendValue(t32, u, i, float32(k%4))
			}
		}
		m := l.New(models.RatingsSpec{Train: r, Users: 5, Items: 4, D: 2, T: 2, Lambda: 1, Gamma: 1})
		if err := m.Validate(); err != nil {
			t.Fatalf("likelihood %s: %v", name, err)
		}
		if n, want := m.NumParams(), m.Blocks().Len()+models.ArraysLen(m.Arrays()); n != want {
			t.Errorf("likelihood %s: %d parameters, blocks and arrays %d", name, n, want)
		}
		x := make([]float64, m.NumParams())
		m.Init(x, rand.New(rand.NewPCG(1, 1)))
		if _, err := (&optim.Driver{Method: &optim.AdaGrad{Rate: optim.Constant(0.1)}}).Run(m.Problem(), x, 20, nil); err != nil {
			t.Fatalf("likelihood %s: %v", name, err)
		}
		met, err := m.HeldOut(x, r, true)
		if err != nil || len(met) == 0 || met[0].Name != "ll" {
			t.Fatalf("likelihood %s: held out %v, %v: want ll first", name, met, err)
		}
		for _, b := range m.Baseline(r) {
			if !slices.ContainsFunc(met, func(h models.Metric) bool { return h.Name == b.Name }) {
				t.Errorf("likelihood %s: baseline metric %s not among the held-out ones %v", name, b.Name, met)
			}
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
