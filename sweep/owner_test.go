package sweep_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/sweep"
	"goldstone/trialio"
)

// ownerPipeline is a test pipeline of one node per trial whose stage
// waits, once it has said so on ownerGate.started, until ownerGate.release
// is closed (or its ctx ends): a run that stays live as long as a test
// needs.
type ownerPipeline struct{}

type ownerSettings struct{ settings.Seeded }

func (ownerPipeline) Name() string  { return "test-owner" }
func (ownerPipeline) Settings() any { return &ownerSettings{} }
func (ownerPipeline) Build(_ context.Context, b *experiment.Built, _ *experiment.Experiment, trials []experiment.Trial, _ experiment.Env) error {
	for _, tr := range trials {
		id := "wait/" + tr.Slug()
		b.Add(&pipeline.Node{ID: id, Stage: &ownerStage{name: tr.Name}, Outputs: []string{"result"}})
		b.AddTrial(tr, id, id)
	}
	return nil
}

func init() { experiment.Register(ownerPipeline{}) }

var ownerGate struct {
	sync.Mutex
	started chan string   // a trial's name when its stage runs
	release chan struct{} // closed: the stages end
}

// resetOwnerGate makes the gate anew and returns its channels.
func resetOwnerGate() (started chan string, release chan struct{}) {
	ownerGate.Lock()
	defer ownerGate.Unlock()
	ownerGate.started, ownerGate.release = make(chan string, 16), make(chan struct{})
	return ownerGate.started, ownerGate.release
}

type ownerStage struct{ name string }

func (s *ownerStage) Name() string    { return "owner-test" }
func (s *ownerStage) Version() string { return "1" }
func (s *ownerStage) Params() any     { return map[string]any{"name": s.name} }
func (s *ownerStage) Run(ctx context.Context, io *pipeline.IO) error {
	ownerGate.Lock()
	started, release := ownerGate.started, ownerGate.release
	ownerGate.Unlock()
	started <- s.name
	select {
	case <-release:
	case <-ctx.Done():
		return ctx.Err()
	}
	dir := io.Output("result")
	ser := &trialio.Series{}
	ser.Add("loss", 0, 1)
	if err := trialio.WriteSeries(filepath.Join(dir, "series.arrow"), ser); err != nil {
		return err
	}
	return trialio.WriteSummary(filepath.Join(dir, "summary.json"), trialio.Summary{"one": 1})
}

func ownerExperiment(t *testing.T) *experiment.Experiment {
	t.Helper()
	cfg, err := experiment.ParseConfig("t.toml", []byte(`
[experiments.own]
pipeline = "test-owner"
[experiments.own.grid]
seed = [1, 2]
`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Experiments["own"]
}

// goneOwner is an owner on this host whose process has exited.
func goneOwner(t *testing.T) runs.Owner {
	t.Helper()
	cmd := exec.Command("sleep", "0")
	if err := cmd.Run(); err != nil {
		t.Skipf("no sleep command: %v", err)
	}
	host, _ := os.Hostname()
	return runs.Owner{Host: host, PID: cmd.Process.Pid, Started: "0:1", Token: "gone"}
}

// recycledOwner is an owner whose pid a later process (this one) took.
func recycledOwner(t *testing.T) runs.Owner {
	t.Helper()
	me := runs.Self()
	if me.Started == "" {
		t.Skip("this OS does not say when a process started")
	}
	return runs.Owner{Host: me.Host, PID: me.PID, Started: me.Started + "0", Token: "recycled"}
}

// setOwner writes o as run id's owner, with the given status, as a runner
// that recorded it and was then killed left it.
func setOwner(t *testing.T, db *sql.DB, id int64, o runs.Owner, status string) {
	t.Helper()
	if _, err := db.Exec(`UPDATE runs SET status = ?, host = ?, pid = ?, owner_started = ?, owner_token = ? WHERE id = ?`,
		status, o.Host, o.PID, o.Started, o.Token, id); err != nil {
		t.Fatal(err)
	}
}

// TestResumedRunIsOwnedByItsRunner: a run whose runner was killed (its pid
// gone, or taken by a later process) is resumed, and from then on belongs
// to the resuming runner: stale-run marking leaves it running, and a
// second runner on the same database with another workdir refuses it,
// naming it and its owner, and writes nothing; the resumed run finishes.
func TestResumedRunIsOwnedByItsRunner(t *testing.T) {
	for _, c := range []struct {
		name  string
		owner func(*testing.T) runs.Owner
	}{
		{"killed", goneOwner},
		{"recycled pid", recycledOwner},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			dbPath := filepath.Join(dir, "results.db")
			st, err := runs.Open(ctx, dbPath)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			e := ownerExperiment(t)
			opts := sweep.RunOptions{WorkDir: filepath.Join(dir, "work"), Jobs: 2, Cores: 2}

			// A first runner starts the run and is stopped mid-trial; then
			// the run is left as a killed runner leaves it.
			started, release := resetOwnerGate()
			ctx1, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { _, err := sweep.Execute(ctx1, st, e, sweep.Local{}, opts); done <- err }()
			waitStarted(t, started)
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("first runner: %v", err)
			}
			db, err := sql.Open("sqlite3", dbPath+"?_busy_timeout=10000")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			setOwner(t, db, 1, c.owner(t), runs.StatusRunning)

			// The resuming runner.
			started, release = resetOwnerGate()
			type result struct {
				out *sweep.Outcome
				err error
			}
			resumed := make(chan result, 1)
			go func() { out, err := sweep.Execute(ctx, st, e, sweep.Local{}, opts); resumed <- result{out, err} }()
			select {
			case <-started:
			case r := <-resumed:
				t.Fatalf("the run was not resumed: %v", r.err)
			case <-time.After(time.Minute):
				t.Fatal("the resumed run did not start a trial within a minute")
			}
			// Both trials run at once (Jobs 2): wait until the resumed
			// runner has recorded both running, so that the trials seen
			// before the second runner do not still change by the first.
			waitNoPending(t, db)
			ri, err := st.Run(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			me := runs.Self()
			if o := ri.Owner(); o.Host != me.Host || o.PID != me.PID || o.Started != me.Started || o.Token == "" {
				t.Errorf("owner of the resumed run %+v, want this process %+v", o, me)
			}

			// A second Store on the file, as another runner would open.
			st2, err := runs.Open(ctx, dbPath)
			if err != nil {
				t.Fatal(err)
			}
			defer st2.Close()
			trialsBefore := trialStatuses(t, db)
			if marked, err := sweep.MarkStaleRuns(ctx, st2); err != nil || len(marked) != 0 {
				t.Errorf("stale-run marking of a live resumed run: marked %d, %v", len(marked), err)
			}
			opts2 := opts
			opts2.WorkDir = filepath.Join(dir, "work2")
			ctx2, cancel2 := context.WithTimeout(ctx, 20*time.Second)
			defer cancel2()
			_, err = sweep.Execute(ctx2, st2, e, sweep.Local{}, opts2)
			var oe *runs.OwnedError
			if !errors.As(err, &oe) || oe.RunID != 1 || oe.Owner.PID != me.PID || oe.Owner.Host != me.Host {
				t.Errorf("a second runner on the live resumed run: %v, want it refused as in progress", err)
			}
			if ri, _ := st2.Run(ctx, 1); ri.Status != runs.StatusRunning || ri.OwnerToken == "" || ri.OwnerToken != ri.Owner().Token {
				t.Errorf("after the second runner: run %s", ri.Status)
			}
			if got := trialStatuses(t, db); got != trialsBefore {
				t.Errorf("trials after the second runner: %s, before %s", got, trialsBefore)
			}
			var n int
			db.QueryRow(`SELECT count(*) FROM runs`).Scan(&n)
			if n != 1 {
				t.Errorf("%d runs after the refusal", n)
			}

			close(release)
			r := <-resumed
			if r.err != nil || !r.out.Resumed || r.out.Status != runs.StatusFinished || r.out.Done != 2 {
				t.Fatalf("the resumed run: %+v, %v", r.out, r.err)
			}
		})
	}
}

func waitStarted(t *testing.T, started <-chan string) {
	t.Helper()
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("no trial started within a minute")
	}
}

// trialStatuses renders the trials' rows of the database.
// waitNoPending waits until no trial of the database is pending (a minute
// at most).
func waitNoPending(t *testing.T, db *sql.DB) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM trial_rows WHERE status = 'pending'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d trials still pending after a minute", n)
		}
	}
}

func trialStatuses(t *testing.T, db *sql.DB) string {
	t.Helper()
	var s sql.NullString
	if err := db.QueryRow(`SELECT group_concat(run_id || ':' || trial || ':' || status || ':' || error, ' ') FROM (SELECT * FROM trial_rows ORDER BY run_id, trial)`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s.String
}

// TestMarkStaleRunsChecksTheOwner: a running run is stale when its owner's
// process on this host is gone or its pid names a later process; runs of
// other hosts, of a live owner, of the Slurm executor, and ended runs are
// left alone.
func TestMarkStaleRunsChecksTheOwner(t *testing.T) {
	ctx := context.Background()
	st, err := runs.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	me := runs.Self()
	far := me
	far.Host += ".elsewhere"
	for _, c := range []struct {
		name     string
		owner    runs.Owner
		status   string
		executor string
		stale    bool
	}{
		{"gone", goneOwner(t), runs.StatusRunning, runs.ExecutorLocal, true},
		{"recycled pid", recycledOwner(t), runs.StatusRunning, runs.ExecutorLocal, true},
		{"live", me, runs.StatusRunning, runs.ExecutorLocal, false},
		{"another host", far, runs.StatusRunning, runs.ExecutorLocal, false},
		{"slurm", goneOwner(t), runs.StatusRunning, runs.ExecutorSlurm, false},
		{"ended", goneOwner(t), runs.StatusFinished, runs.ExecutorLocal, false},
	} {
		info := runs.RunInfo{Experiment: c.name, Status: c.status}
		info.SetOwner(c.owner)
		id, err := st.CreateRun(ctx, info)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetExecutor(ctx, id, c.executor); err != nil {
			t.Fatal(err)
		}
	}
	marked, err := sweep.MarkStaleRuns(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ri := range marked {
		got = append(got, ri.Experiment)
	}
	if len(got) != 2 || got[0] != "gone" || got[1] != "recycled pid" {
		t.Errorf("marked %q, want the gone owner's and the recycled pid's runs", got)
	}
	all, err := st.Runs(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ri := range all {
		want := map[string]string{"gone": runs.StatusInterrupted, "recycled pid": runs.StatusInterrupted, "ended": runs.StatusFinished}[ri.Experiment]
		if want == "" {
			want = runs.StatusRunning
		}
		if ri.Status != want {
			t.Errorf("run of %q: %s, want %s", ri.Experiment, ri.Status, want)
		}
	}
}
