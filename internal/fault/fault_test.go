package fault

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestPointKills re-runs this test binary as a child that reaches a point
// three times with GOLDSTONE_FAULT naming its second hit.
func TestPointKills(t *testing.T) {
	if os.Getenv("FAULT_CHILD") == "1" {
		Point("other")
		Point("x")
		os.Stdout.WriteString("after first\n")
		Point("x")
		os.Stdout.WriteString("after second\n")
		os.Exit(0)
	}
	for _, tc := range []struct {
		env    string
		killed bool
		out    string
	}{
		{"x@2", true, "after first\n"},
		{"x", true, ""},
		{"y", false, "after first\nafter second\n"},
		{"", false, "after first\nafter second\n"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPointKills$")
		cmd.Env = append(os.Environ(), "FAULT_CHILD=1", Env+"="+tc.env)
		out, err := cmd.Output()
		var ee *exec.ExitError
		killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
		if killed != tc.killed || string(out) != tc.out {
			t.Errorf("%s=%q: killed %v (%v), output %q; want killed %v, output %q", Env, tc.env, killed, err, out, tc.killed, tc.out)
		}
	}
}
