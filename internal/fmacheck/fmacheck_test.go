package fmacheck_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/internal/fmacheck"
)

// goTool returns the go command and the module root, or skips.
func goTool(t *testing.T) (string, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: compiling the module under four builds takes a while")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot compile the module's listings")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return goCmd, root
}

func exempt(fn string) bool {
	_, ok := fmacheck.Exempt[fmacheck.Package(fn)]
	return ok
}

// TestCatches proves the check can fail: on a package of known patterns it
// must report the contracted product and the build-dependent calls, and
// nothing for the rounded product, math.FMA or math.Sqrt.
func TestCatches(t *testing.T) {
	goCmd, root := goTool(t)
	const pkg = "./internal/fmacheck/testdata/fused"
	const list = "goldstone/internal/fmacheck/testdata/fused"
	ref, err := fmacheck.Compile(goCmd, root, fmacheck.Builds[0], list, pkg)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range fmacheck.Builds[1:] {
		got, err := fmacheck.Compile(goCmd, root, b, list, pkg)
		if err != nil {
			t.Fatal(err)
		}
		fused := fmacheck.Fused(ref, got, b.Name, func(string) bool { return false })
		if len(fused) != 1 || !strings.Contains(fused[0], "fused.Fused") {
			t.Errorf("%s: want exactly fused.Fused reported as contracted, got %q", b.Name, fused)
		}
		calls := strings.Join(fmacheck.BuildDependent(got, b.Name, func(string) bool { return false }), "\n")
		for _, want := range []string{"fused.Exp calls math.archExp", "fused.Normal calls math/rand/v2.(*Rand).NormFloat64"} {
			if !strings.Contains(calls, want) {
				t.Errorf("%s: %q not reported in\n%s", b.Name, want, calls)
			}
		}
		if strings.Contains(calls, "Sqrt") || strings.Contains(calls, "math.FMA") {
			t.Errorf("%s: an exact function reported:\n%s", b.Name, calls)
		}
	}
}

// TestNoBuildDependentBits compiles goldstone/... under every build of
// fmacheck.Builds and fails, naming the function and file:line, where the
// compiler fused a multiply-add that the reference build (GOAMD64=v1, no
// fusion) does not have, or where goldstone code calls a function whose bits
// depend on the build.
func TestNoBuildDependentBits(t *testing.T) {
	goCmd, root := goTool(t)
	var ref *fmacheck.Listing
	var rep fmacheck.Report
	for _, b := range fmacheck.Builds {
		got, err := fmacheck.Compile(goCmd, root, b, "goldstone/...", "./...")
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = got
		} else {
			rep.Add(b.Name, fmacheck.Fused(ref, got, b.Name, exempt))
		}
		rep.Add(b.Name, fmacheck.BuildDependent(got, b.Name, exempt))
	}
	for _, l := range rep.Lines() {
		t.Error(strings.ReplaceAll(l, root+"/", ""))
	}
}
