package runs

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Environment returns a RunInfo with the machine and build fields filled:
// GoVersion, OS, Arch, CPUModel (from /proc/cpuinfo, "" if unavailable),
// GOMAXPROCS, Host, PID, and GitCommit/GitDirty: the revision the running
// binary was built from (vcs.revision and vcs.modified of its build info,
// stamped by `go build` in a checkout), else that of the working directory
// (`git rev-parse HEAD` and `git status --porcelain`, for `go run` and
// test binaries, which carry no stamp); "" and false when neither is known.
// Git runs with GIT_OPTIONAL_LOCKS=0: it writes nothing in the user's
// repository (no index refresh, no .git/index.lock), so a run neither
// blocks nor is blocked by the user's git.
func Environment() RunInfo {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return environment(ctx, "")
}

func environment(ctx context.Context, dir string) RunInfo {
	info := RunInfo{
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		PID:        os.Getpid(),
	}
	info.Host, _ = os.Hostname()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		info.CPUModel = cpuModel(f)
		f.Close()
	}
	if c, d, ok := buildVCS(); ok {
		info.GitCommit, info.GitDirty = c, d
	} else {
		info.GitCommit, info.GitDirty = gitState(ctx, dir)
	}
	return info
}

// buildVCS returns the VCS revision stamped into the running binary.
func buildVCS() (commit string, dirty, ok bool) {
	bi, found := debug.ReadBuildInfo()
	if !found {
		return "", false, false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return commit, dirty, commit != ""
}

// cpuModel returns the first "model name" (x86) or, failing that,
// "Hardware"/"cpu model"/"Processor" value in a /proc/cpuinfo listing.
func cpuModel(r io.Reader) string {
	fallback := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		val = strings.TrimSpace(val)
		if val == "" {
			continue
		}
		switch key {
		case "model name":
			return val
		case "Hardware", "cpu model", "Processor", "uarch":
			if fallback == "" {
				fallback = val
			}
		}
	}
	return fallback
}

// gitState reads the revision of the checkout at dir ("" for the working
// directory) and whether it has changes, without writing to it: `git
// status` refreshes the index on disk (taking .git/index.lock) unless
// optional locks are off.
func gitState(ctx context.Context, dir string) (commit string, dirty bool) {
	run := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
		return cmd.Output()
	}
	out, err := run("rev-parse", "HEAD")
	if err != nil {
		return "", false
	}
	commit = strings.TrimSpace(string(out))
	if out, err := run("status", "--porcelain"); err == nil {
		dirty = len(bytes.TrimSpace(out)) > 0
	}
	return commit, dirty
}

// Target is the build a binary was compiled for: operating system,
// architecture, its instruction-set level (GOAMD64, GOARM64, ...) and build
// tags (purego forces the pure-Go twins of the assembly kernels). Numeric
// results do not depend on it (README, "Same results on every machine");
// it is recorded so that a reproduction on another build says so.
type Target struct {
	OS, Arch string // GOOS, GOARCH
	Level    string // e.g. "GOAMD64=v3", "GOARM64=v8.0"; "" if not known
	Tags     string // the build's -tags value; "" for none
}

// String renders the target as "linux/amd64 GOAMD64=v3 -tags=purego".
func (t Target) String() string {
	s := t.OS + "/" + t.Arch
	if t.Level != "" {
		s += " " + t.Level
	}
	if t.Tags != "" {
		s += " -tags=" + t.Tags
	}
	return s
}

// BuildTarget returns the target of the running binary, from its build
// information (GOOS, GOARCH, the architecture's level setting, -tags), with
// runtime.GOOS and runtime.GOARCH where that is missing.
func BuildTarget() Target {
	t := Target{OS: runtime.GOOS, Arch: runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return t
	}
	return targetOf(bi.Settings, t)
}

// targetOf fills t from build settings.
func targetOf(settings []debug.BuildSetting, t Target) Target {
	for _, s := range settings {
		switch s.Key {
		case "GOOS":
			t.OS = s.Value
		case "GOARCH":
			t.Arch = s.Value
		case "-tags":
			t.Tags = s.Value
		}
	}
	for _, s := range settings {
		// GOAMD64, GOARM64, GOARM, GO386, GOPPC64, GORISCV64, ...: the
		// level variable of the target architecture (GOPPC64 also for
		// ppc64le).
		if strings.HasPrefix(s.Key, "GO") && s.Key != "GOOS" && s.Key != "GOARCH" &&
			strings.EqualFold(s.Key[2:], strings.TrimSuffix(t.Arch, "le")) {
			t.Level = s.Key + "=" + s.Value
		}
	}
	return t
}
