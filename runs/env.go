package runs

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Environment returns a RunInfo with the machine and build fields filled:
// GoVersion, OS, Arch, CPUModel (from /proc/cpuinfo, "" if unavailable),
// GOMAXPROCS, Host, PID, and GitCommit/GitDirty of the working directory
// (from `git rev-parse HEAD` and `git status --porcelain`; "" and false
// when git or a checkout is absent).
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
	info.GitCommit, info.GitDirty = gitState(ctx, dir)
	return info
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

func gitState(ctx context.Context, dir string) (commit string, dirty bool) {
	run := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
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
