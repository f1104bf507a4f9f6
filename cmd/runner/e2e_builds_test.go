package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// buildsConfig is an experiment of each kind of numeric path: the
// artificial data (d = 3, GD, Goldstone with flips, Procrustes) and planted
// MovieLens ratings at d = 10 (logistic MF on the FMA kernels, AdaGrad,
// Goldstone, Procrustes, the gauge-gap meter).
const buildsConfig = `
[experiments.art]
pipeline = "artificial"
[experiments.art.settings]
time_steps = 6
steps = 200
clip = 0.01
lr = 1.0
lr_s0 = 100.0
k1 = 20
gauge_gap_every = 20
snapshots = [0, 200]
[[experiments.art.variants]]
name = "gd"
[[experiments.art.variants]]
name = "goldstone"
gauge = "goldstone"
[[experiments.art.variants]]
name = "procrustes"
gauge = "procrustes"

[experiments.ml]
pipeline = "movielens"
[experiments.ml.settings]
dataset = "planted"
planted_users = 120
planted_items = 60
planted_ratings = 4000
planted_dim = 3
bins = 3
dim = 10
steps = 30
valid_every = 10
gauge_gap_every = 10
k1 = 10
optimizer = "adagrad"
lr = 0.5
gamma = 1.0
[[experiments.ml.variants]]
name = "goldstone"
gauge = "goldstone"
[[experiments.ml.variants]]
name = "procrustes"
gauge = "procrustes"
`

// otherBuild is a build of the runner other than the default one.
type otherBuild struct {
	name   string
	env    []string // for go build
	tags   string
	target string   // what repro must print for it
	exec   []string // emulator prefix
}

// TestReproAcrossBuilds: runs recorded by the default build of the runner
// (GOAMD64=v1) reproduce bit for bit (repro compares every summary metric
// exactly) with the GOAMD64=v3 build, the GOAMD64=v3 purego build (the Go
// twins of the assembly kernels) and, where
// qemu-aarch64 and an aarch64 C cross compiler are installed, the arm64
// build under emulation; repro prints both machines and builds; and a run of
// each other build in a fresh directory writes the same parameter bytes
// (.npy, snapshots.json) into the cache, under the same cache keys.
func TestReproAcrossBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the runner three more times")
	}
	if runtime.GOARCH != "amd64" {
		t.Skip("the other builds here are amd64 ones (GOAMD64=v3, purego); on " + runtime.GOARCH + " .ci/run's numeric tests cover it")
	}
	// The recording build is built here too (the test's own runnerBin
	// follows the environment, which may set GOAMD64 or tags).
	builds := []otherBuild{
		{name: "v1", env: []string{"GOARCH=amd64", "GOAMD64=v1"}, target: "linux/amd64 GOAMD64=v1"},
		{name: "v3", env: []string{"GOAMD64=v3"}, target: "linux/amd64 GOAMD64=v3"},
		{name: "v3-purego", env: []string{"GOAMD64=v3"}, tags: "purego", target: "linux/amd64 GOAMD64=v3 -tags=purego"},
	}
	_, errQ := exec.LookPath("qemu-aarch64")
	_, errC := exec.LookPath("aarch64-linux-gnu-gcc")
	if errQ == nil && errC == nil {
		builds = append(builds, otherBuild{name: "arm64", env: []string{"GOARCH=arm64", "CGO_ENABLED=1", "CC=aarch64-linux-gnu-gcc"},
			target: "linux/arm64 GOARM64=v8.0", exec: []string{"qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"}})
	} else {
		t.Log("no qemu-aarch64 or aarch64-linux-gnu-gcc (Debian: qemu-user, gcc-aarch64-linux-gnu, libc6-dev-arm64-cross): arm64 build not tested here")
	}
	bin := t.TempDir()
	for i, b := range builds {
		path := filepath.Join(bin, "runner-"+b.name)
		args := []string{"build", "-o", path}
		if b.tags != "" {
			args = append(args, "-tags", b.tags)
		}
		cmd := exec.Command("go", append(args, ".")...)
		cmd.Env = append(os.Environ(), b.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build (%s): %v\n%s", b.name, err, out)
		}
		builds[i].exec = append(b.exec, path)
	}
	recorder := builds[0].exec
	builds = builds[1:]
	rec := newBuildsEnv(t)
	for _, exp := range []string{"art", "ml"} {
		if out, errs, code := runBin(t, rec.dir, recorder, "--experiment", exp); code != 0 {
			t.Fatalf("v1 run %s: exit %d\n%s\n%s", exp, code, out, errs)
		}
	}
	want := cacheDigests(t, rec.dir)
	wantRes := resultsWithoutTimings(t, rec.results("art")) + resultsWithoutTimings(t, rec.results("ml"))
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			for _, exp := range []string{"art", "ml"} {
				out, errs, code := runBin(t, rec.dir, b.exec, "repro", "--experiment", exp)
				if code != 0 || !strings.Contains(out, "summary metrics of") || !strings.Contains(out, "match") {
					t.Fatalf("%s repro --experiment %s: exit %d\n%s\n%s", b.name, exp, code, out, errs)
				}
				if !strings.Contains(out, "recorded: run ") || !strings.Contains(out, "linux/amd64 GOAMD64=v1)") ||
					!strings.Contains(out, "now: ") || !strings.Contains(out, b.target+")") || !strings.Contains(out, "another machine or build") {
					t.Errorf("%s repro does not name both builds:\n%s", b.name, out)
				}
			}
			fresh := newBuildsEnv(t)
			for _, exp := range []string{"art", "ml"} {
				if out, errs, code := runBin(t, fresh.dir, b.exec, "--experiment", exp); code != 0 {
					t.Fatalf("%s run %s: exit %d\n%s\n%s", b.name, exp, code, out, errs)
				}
			}
			got := cacheDigests(t, fresh.dir)
			if len(got) == 0 || !slices.Equal(got, want) {
				t.Errorf("%s: the cache's parameter files differ from the default build's:\n%s\nwant\n%s", b.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if res := resultsWithoutTimings(t, fresh.results("art")) + resultsWithoutTimings(t, fresh.results("ml")); res != wantRes {
				t.Errorf("%s: results differ from the default build's:\n%s\nwant\n%s", b.name, res, wantRes)
			}
		})
	}
}

func newBuildsEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "experiments.toml"), []byte(buildsConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, dir: dir}
}

// runBin runs argv (an emulator and binary, or a binary) with args in dir.
func runBin(t *testing.T, dir string, argv []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(argv[0], append(slices.Clone(argv[1:]), args...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

// cacheDigests lists "path sha256" for the parameter files (.npy,
// snapshots.json) under dir/work/cache, sorted; the path includes the cache
// key, so equal lists also mean equal keys.
func cacheDigests(t *testing.T, dir string) []string {
	t.Helper()
	root := filepath.Join(dir, "work", "cache")
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(p) != ".npy" && d.Name() != "snapshots.json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		sum := sha256.Sum256(b)
		out = append(out, filepath.ToSlash(rel)+" "+hex.EncodeToString(sum[:]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
