package runs

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestBuildTarget: the target names this test binary's architecture and,
// from build settings, the level variable of the architecture and the tags.
func TestBuildTarget(t *testing.T) {
	got := BuildTarget()
	if got.OS != runtime.GOOS || got.Arch != runtime.GOARCH {
		t.Errorf("BuildTarget() = %+v, want %s/%s", got, runtime.GOOS, runtime.GOARCH)
	}
	if runtime.GOARCH == "amd64" && !strings.HasPrefix(got.Level, "GOAMD64=v") {
		t.Errorf("BuildTarget().Level = %q, want GOAMD64=v...", got.Level)
	}
	if env := BuildEnv(); env[EnvTarget] != got.String() {
		t.Errorf("BuildEnv()[%q] = %q, want %q", EnvTarget, env[EnvTarget], got.String())
	}
	for _, c := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{[]debug.BuildSetting{{Key: "GOARCH", Value: "amd64"}, {Key: "GOOS", Value: "linux"}, {Key: "GOAMD64", Value: "v3"}, {Key: "-tags", Value: "purego"}}, "linux/amd64 GOAMD64=v3 -tags=purego"},
		{[]debug.BuildSetting{{Key: "GOARCH", Value: "arm64"}, {Key: "GOOS", Value: "darwin"}, {Key: "GOARM64", Value: "v8.0"}, {Key: "CGO_ENABLED", Value: "0"}}, "darwin/arm64 GOARM64=v8.0"},
		{[]debug.BuildSetting{{Key: "GOARCH", Value: "ppc64le"}, {Key: "GOOS", Value: "linux"}, {Key: "GOPPC64", Value: "power9"}}, "linux/ppc64le GOPPC64=power9"},
		{nil, "plan9/386"},
	} {
		if got := targetOf(c.settings, Target{OS: "plan9", Arch: "386"}).String(); got != c.want {
			t.Errorf("targetOf(%v) = %q, want %q", c.settings, got, c.want)
		}
	}
}

// TestRecordedTarget: the recorded key wins; older runs get the target from
// their build settings, or their OS and Arch.
func TestRecordedTarget(t *testing.T) {
	ri := RunInfo{OS: "linux", Arch: "amd64"}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{EnvTarget: "linux/arm64 GOARM64=v8.0", EnvBuild + "GOARCH": "amd64"}, "linux/arm64 GOARM64=v8.0"},
		{map[string]string{EnvBuild + "GOARCH": "amd64", EnvBuild + "GOOS": "linux", EnvBuild + "GOAMD64": "v3", EnvBuild + "-tags": "purego"}, "linux/amd64 GOAMD64=v3 -tags=purego"},
		{nil, "linux/amd64"},
	} {
		if got := RecordedTarget(ri, c.env); got != c.want {
			t.Errorf("RecordedTarget(%v) = %q, want %q", c.env, got, c.want)
		}
	}
}
