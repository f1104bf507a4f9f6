package slurm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestArraySpec(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		k    int
		want string
	}{
		{[]int{0, 1, 2, 3}, 2, "0-3%2"},
		{[]int{19, 3, 7}, 0, "3,7,19"},
		{[]int{0, 1, 2, 7, 9, 10}, 0, "0-2,7,9-10"},
		{[]int{5}, 1, "5%1"},
		{[]int{2, 2, 3}, 0, "2-3"},
	} {
		if got := ArraySpec(tc.in, tc.k); got != tc.want {
			t.Errorf("ArraySpec(%v, %d) = %q, want %q", tc.in, tc.k, got, tc.want)
		}
		idx, k, err := ParseArraySpec(tc.want)
		if err != nil {
			t.Fatalf("ParseArraySpec(%q): %v", tc.want, err)
		}
		if ArraySpec(idx, k) != tc.want {
			t.Errorf("round trip of %q gave %v %%%d", tc.want, idx, k)
		}
	}
	idx, k, err := ParseArraySpec("0-6:3%4")
	if err != nil || !reflect.DeepEqual(idx, []int{0, 3, 6}) || k != 4 {
		t.Errorf("ParseArraySpec(0-6:3%%4) = %v, %d, %v", idx, k, err)
	}
	for _, bad := range []string{"", "%2", "3-1", "a", "1,,2", "0-3%0", "-1"} {
		if _, _, err := ParseArraySpec(bad); err == nil {
			t.Errorf("ParseArraySpec(%q): no error", bad)
		}
	}
}

func FuzzParseArraySpec(f *testing.F) {
	for _, s := range []string{"0-3%2", "3,7,19", "0-6:2", "1", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		idx, k, err := ParseArraySpec(s)
		if err != nil || len(idx) == 0 || len(idx) > 1000 {
			return
		}
		idx2, k2, err := ParseArraySpec(ArraySpec(idx, k))
		if err != nil || !reflect.DeepEqual(idx, idx2) || k != k2 {
			t.Fatalf("%q: round trip gave %v %d %v", s, idx2, k2, err)
		}
	})
}

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"--qos=long --requeue", []string{"--qos=long", "--requeue"}},
		{`--comment='a b' --x="c \"d\""`, []string{"--comment=a b", `--x=c "d"`}},
		{`a\ b  ''`, []string{"a b", ""}},
	} {
		got, err := SplitArgs(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`'open`, `"open`, `trail\`} {
		if _, err := SplitArgs(bad); err == nil {
			t.Errorf("SplitArgs(%q): no error", bad)
		}
	}
}

func FuzzSplitArgs(f *testing.F) {
	f.Add(`--a 'b c' "d\"e" f\ g`)
	f.Fuzz(func(t *testing.T, s string) {
		args, err := SplitArgs(s)
		if err != nil {
			return
		}
		// Quoting every argument in single quotes splits back the same.
		var b strings.Builder
		for _, a := range args {
			b.WriteString(" '" + strings.ReplaceAll(a, "'", `'\''`) + "'")
		}
		again, err := SplitArgs(b.String())
		if err != nil || !reflect.DeepEqual(again, args) {
			t.Fatalf("%q: %q re-split as %q (%v)", s, args, again, err)
		}
	})
}

func TestJobArgs(t *testing.T) {
	j := &Job{Name: "gs-run-3", Array: "3,7,19%2", Partition: "gpu", Account: "lab", Time: "01:00:00",
		CPUsPerTask: 4, MemMB: 2048, Output: "/w/logs/%A_%a.out", Dependency: "afterany:12", Signal: "B:TERM@120",
		Chdir: "/w", Extra: []string{"--qos=long", "--requeue"}}
	want := []string{"--parsable", "--job-name=gs-run-3", "--array=3,7,19%2", "--partition=gpu", "--account=lab",
		"--time=01:00:00", "--cpus-per-task=4", "--mem=2048M", "--output=/w/logs/%A_%a.out",
		"--dependency=afterany:12", "--signal=B:TERM@120", "--chdir=/w", "--qos=long", "--requeue"}
	if got := j.Args(); !reflect.DeepEqual(got, want) {
		t.Errorf("Args:\n got %q\nwant %q", got, want)
	}
	if got := (&Job{}).Args(); !reflect.DeepEqual(got, []string{"--parsable"}) {
		t.Errorf("empty job Args = %q", got)
	}
	k := &Job{Name: "a", Dependency: "afterok:7", KillOnInvalidDep: true}
	if got, want := k.Args(), []string{"--parsable", "--job-name=a", "--dependency=afterok:7", "--kill-on-invalid-dep=yes"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Args with KillOnInvalidDep:\n got %q\nwant %q", got, want)
	}
}

// fakeTools puts fake sbatch, squeue, scancel and scontrol on PATH. Each records its
// arguments (one per line) in dir/<tool>.args.<n> and its stdin in
// dir/<tool>.stdin.<n>, where n counts its calls from 1. If dir/<tool>.fail.<n>
// exists, call n prints that file on stderr and exits 1; otherwise it prints
// dir/<tool>.out (if present).
func fakeTools(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"sbatch", "squeue", "scancel", "scontrol"} {
		script := `#!/bin/sh
d='` + dir + `'; tool=` + tool + `
n=$(cat "$d/$tool.count" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$d/$tool.count"
printf '%s\n' "$@" > "$d/$tool.args.$n"
if [ "$tool" = sbatch ]; then cat > "$d/$tool.stdin.$n"; fi
if [ -f "$d/$tool.fail.$n" ]; then cat "$d/$tool.fail.$n" >&2; exit 1; fi
if [ -f "$d/$tool.out" ]; then cat "$d/$tool.out"; fi
`
		if err := os.WriteFile(filepath.Join(bin, tool), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func calls(t *testing.T, dir, tool string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, tool+".count"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, c := range strings.TrimSpace(string(b)) {
		n = n*10 + int(c-'0')
	}
	return n
}

// recordSleeps returns a Sleep that records its waits without waiting.
func recordSleeps(waits *[]time.Duration) func(context.Context, time.Duration) error {
	return func(_ context.Context, d time.Duration) error {
		*waits = append(*waits, d)
		return nil
	}
}

const script = "#!/bin/sh\nexec runner worker --index $SLURM_ARRAY_TASK_ID\n"

func TestSubmitFake(t *testing.T) {
	dir := fakeTools(t)
	write(t, filepath.Join(dir, "sbatch.out"), "4242;local\n")
	var c Client
	id, err := c.Submit(context.Background(), &Job{Array: ArraySpec([]int{3, 7, 19}, 2), Signal: "B:TERM@120", Script: script})
	if err != nil || id != "4242" {
		t.Fatalf("Submit = %q, %v", id, err)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "sbatch.args.1"))
	if got := strings.Fields(string(args)); !reflect.DeepEqual(got, []string{"--parsable", "--array=3,7,19%2", "--signal=B:TERM@120"}) {
		t.Errorf("sbatch args %q", got)
	}
	stdin, _ := os.ReadFile(filepath.Join(dir, "sbatch.stdin.1"))
	if string(stdin) != script {
		t.Errorf("sbatch stdin %q, want the script", stdin)
	}
	if _, err := c.Submit(context.Background(), &Job{Script: "runner worker"}); err == nil {
		t.Error("a script without #! was submitted")
	}
}

func TestSubmitRetriesTransient(t *testing.T) {
	dir := fakeTools(t)
	write(t, filepath.Join(dir, "sbatch.out"), "77\n")
	write(t, filepath.Join(dir, "sbatch.fail.1"), "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation\n")
	write(t, filepath.Join(dir, "sbatch.fail.2"), "sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying\n")
	var waits []time.Duration
	c := Client{Sleep: recordSleeps(&waits)}
	id, err := c.Submit(context.Background(), &Job{Script: script})
	if err != nil || id != "77" {
		t.Fatalf("Submit = %q, %v", id, err)
	}
	if calls(t, dir, "sbatch") != 3 || !reflect.DeepEqual(waits, []time.Duration{2 * time.Second, 4 * time.Second}) {
		t.Errorf("calls %d, waits %v; want 3 calls after waits of 2s and 4s", calls(t, dir, "sbatch"), waits)
	}
}

func TestSubmitGivesUp(t *testing.T) {
	dir := fakeTools(t)
	for i := 1; i <= 3; i++ {
		write(t, filepath.Join(dir, "sbatch.fail."+string(rune('0'+i))), "sbatch: error: Unable to contact slurm controller (connect failure)\n")
	}
	var waits []time.Duration
	c := Client{Retries: 2, Backoff: time.Second, Sleep: recordSleeps(&waits)}
	_, err := c.Submit(context.Background(), &Job{Script: script})
	var ce *CommandError
	if !errors.As(err, &ce) || !ce.Transient || calls(t, dir, "sbatch") != 3 {
		t.Fatalf("err %v after %d calls; want a transient CommandError after 3", err, calls(t, dir, "sbatch"))
	}
	if !reflect.DeepEqual(waits, []time.Duration{time.Second, 2 * time.Second}) {
		t.Errorf("waits %v", waits)
	}
}

func TestSubmitPermanentErrorIsOneLine(t *testing.T) {
	dir := fakeTools(t)
	write(t, filepath.Join(dir, "sbatch.fail.1"), "sbatch: error: invalid partition specified: nope\nsbatch: error: Batch job submission failed: Invalid partition name specified\n")
	var waits []time.Duration
	c := Client{Sleep: recordSleeps(&waits)}
	_, err := c.Submit(context.Background(), &Job{Partition: "nope", Script: script})
	if err == nil {
		t.Fatal("no error")
	}
	want := "sbatch failed (exit status 1): sbatch: error: invalid partition specified: nope; sbatch: error: Batch job submission failed: Invalid partition name specified"
	if err.Error() != want {
		t.Errorf("error\n %q\nwant\n %q", err, want)
	}
	if calls(t, dir, "sbatch") != 1 || len(waits) != 0 {
		t.Errorf("a permanent error was retried (%d calls)", calls(t, dir, "sbatch"))
	}
}

func TestSubmitBadOutput(t *testing.T) {
	dir := fakeTools(t)
	write(t, filepath.Join(dir, "sbatch.out"), "Submitted batch job 12\n") // without --parsable
	var c Client
	if _, err := c.Submit(context.Background(), &Job{Script: script}); err == nil || !strings.Contains(err.Error(), "unexpected output") {
		t.Errorf("err = %v", err)
	}
}

func TestNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var c Client
	if err := c.Available(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Available = %v", err)
	}
	if _, err := c.Queue(context.Background(), "1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Queue = %v", err)
	}
}

func TestQueueFake(t *testing.T) {
	dir := fakeTools(t)
	write(t, filepath.Join(dir, "squeue.out"), "5_2|PENDING|JobArrayTaskLimit\n5_0|RUNNING|None\n9|PENDING|Dependency\n")
	var c Client
	tasks, err := c.Queue(context.Background(), "5")
	if err != nil {
		t.Fatal(err)
	}
	want := []Task{{"5", 2, "PENDING", "JobArrayTaskLimit"}, {"5", 0, "RUNNING", "None"}}
	if !reflect.DeepEqual(tasks, want) {
		t.Errorf("tasks %+v", tasks)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "squeue.args.1"))
	if got := strings.Fields(string(args)); !reflect.DeepEqual(got, []string{"-h", "-r", "-j", "5", "-o", "%i|%T|%r"}) {
		t.Errorf("squeue args %q", got)
	}
	write(t, filepath.Join(dir, "squeue.fail.2"), "slurm_load_jobs error: Invalid job id specified\n")
	if tasks, err := c.Queue(context.Background(), "5"); err != nil || tasks != nil {
		t.Errorf("finished job: %v, %v; want no tasks, no error", tasks, err)
	}
	write(t, filepath.Join(dir, "squeue.out"), "garbage\n")
	if _, err := c.Queue(context.Background(), "5"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad output: err = %v", err)
	}
}

func TestPollerRateLimit(t *testing.T) {
	dir := fakeTools(t)
	write(t, filepath.Join(dir, "squeue.out"), "5_0|RUNNING|None\n")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &Poller{Client: &Client{Retries: -1}, Now: func() time.Time { return now }}
	ctx := context.Background()
	for range 3 {
		if _, _, err := p.Queue(ctx, "5"); err != nil {
			t.Fatal(err)
		}
		now = now.Add(10 * time.Second)
	}
	if n := calls(t, dir, "squeue"); n != 1 {
		t.Fatalf("3 polls within 30 s made %d squeue calls, want 1", n)
	}
	p.Queue(ctx, "6") // another array has its own budget
	if n := calls(t, dir, "squeue"); n != 2 {
		t.Fatalf("a second job made no call of its own (%d calls)", n)
	}
	now = now.Add(time.Second) // 31 s after the first call
	if _, at, _ := p.Queue(ctx, "5"); calls(t, dir, "squeue") != 3 || !at.Equal(now) {
		t.Fatalf("no new call after 30 s (%d calls)", calls(t, dir, "squeue"))
	}
	// A failing squeue doubles the interval: 60 s, then 120 s.
	write(t, filepath.Join(dir, "squeue.fail.4"), "squeue: error: Socket timed out on send/recv operation\n")
	write(t, filepath.Join(dir, "squeue.fail.5"), "squeue: error: Socket timed out on send/recv operation\n")
	now = now.Add(30 * time.Second)
	tasks, _, err := p.Queue(ctx, "5")
	if err == nil || len(tasks) != 1 {
		t.Fatalf("failed poll: tasks %v, err %v; want the last tasks and the error", tasks, err)
	}
	now = now.Add(45 * time.Second)
	p.Queue(ctx, "5")
	if n := calls(t, dir, "squeue"); n != 4 {
		t.Fatalf("polled %d times; want no call 45 s after a failure", n)
	}
	now = now.Add(15 * time.Second)
	p.Queue(ctx, "5")
	now = now.Add(90 * time.Second)
	p.Queue(ctx, "5")
	if n := calls(t, dir, "squeue"); n != 5 {
		t.Fatalf("polled %d times; want 5 (back-off 120 s after a second failure)", n)
	}
	now = now.Add(30 * time.Second)
	if _, _, err := p.Queue(ctx, "5"); err != nil || calls(t, dir, "squeue") != 6 {
		t.Fatalf("after back-off: err %v, %d calls", err, calls(t, dir, "squeue"))
	}
}

func TestCancelFake(t *testing.T) {
	dir := fakeTools(t)
	var c Client
	if err := c.Cancel(context.Background(), "5", 3); err != nil {
		t.Fatal(err)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "scancel.args.1"))
	if strings.TrimSpace(string(args)) != "5_3" {
		t.Errorf("scancel args %q", args)
	}
}

func TestTaskActive(t *testing.T) {
	for state, want := range map[string]bool{"PENDING": true, "RUNNING": true, "SUSPENDED": true, "CONFIGURING": true,
		"COMPLETING": true, "REQUEUED": true, "REQUEUE_HOLD": true, "RESIZING": true,
		"COMPLETED": false, "CANCELLED": false, "TIMEOUT": false} {
		if got := (Task{State: state}).Active(); got != want {
			t.Errorf("%s: Active = %v, want %v", state, got, want)
		}
	}
}

// TestTestSubmitAndMaxArraySize: TestSubmit runs sbatch --test-only (not
// --parsable) with the job's request and returns sbatch's refusal;
// MaxArraySize reads scontrol show config and refuses an answer without it.
func TestTestSubmitAndMaxArraySize(t *testing.T) {
	dir := fakeTools(t)
	c := &Client{Retries: -1}
	j := &Job{Array: "0-3%2", Time: "1:00:00", Script: "#!/bin/sh\ntrue\n"}
	if err := c.TestSubmit(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "sbatch.args.1"))
	if got := strings.Fields(string(a)); !reflect.DeepEqual(got, []string{"--test-only", "--array=0-3%2", "--time=1:00:00"}) {
		t.Errorf("sbatch args %q", got)
	}
	write(t, filepath.Join(dir, "sbatch.fail.2"), "sbatch: error: invalid partition specified: nope\nallocation failure: Invalid partition name specified\n")
	if err := c.TestSubmit(context.Background(), j); err == nil || !strings.Contains(err.Error(), "invalid partition") {
		t.Errorf("refused request: %v", err)
	}
	write(t, filepath.Join(dir, "scontrol.out"), "Configuration data as of 2026-11-26T17:25:05\nMaxArraySize            = 40001\nMaxJobCount             = 10000\n")
	if n, err := c.MaxArraySize(context.Background()); err != nil || n != 40001 {
		t.Errorf("MaxArraySize = %d, %v; want 40001", n, err)
	}
	write(t, filepath.Join(dir, "scontrol.out"), "MaxJobCount = 10000\n")
	if n, err := c.MaxArraySize(context.Background()); err == nil {
		t.Errorf("MaxArraySize without the line = %d, no error", n)
	}
}
