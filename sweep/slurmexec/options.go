package slurmexec

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"regexp"
	"time"

	"goldstone/experiment"
	"goldstone/internal/slurm"
	"goldstone/runs"
)

// Options are where a run's files live and how its jobs are submitted.
type Options struct {
	DB         string   // results database (submit host)
	WorkDir    string   // shared work directory: cache and run directories
	DataDir    string   // data sets
	Reports    string   // reports directory ("" keeps the report in the cache only)
	ConfigPath string   // the experiments file
	Sets       []string // --set overrides
	Runner     string   // runner binary the tasks run (frozen into the run directory); "" means os.Executable()
	Jobs       int      // stages at once when running the shared stages locally

	Partition   string // --slurm-partition
	Account     string // --slurm-account
	Time        string // --slurm-time, per task, HH:MM:SS or D-HH:MM:SS
	MaxParallel int    // --slurm-max-parallel: tasks at once (%K) in each array; 0: no limit (the runner's default is DefaultMaxParallel)
	// MaxArraySize is the cluster's: an array's task indices stay below
	// it, and a larger sweep is split into several arrays; 0: read it with
	// `scontrol show config`, else DefaultMaxArraySize.
	MaxArraySize int
	// TrialsPerTask packs that many trials into each array task, run one
	// after another (--slurm-trials-per-task): a sweep of n trials is
	// ceil(n/K) tasks, its packs written to packs.<attempt>.json. The time
	// limit, cpus and memory are then per task: Time must cover K
	// trials. 0 or 1: one trial per task.
	TrialsPerTask int
	Extra         []string // --slurm-extra: further sbatch arguments of the trials' arrays
	// SharedExtra and CollectExtra are the further sbatch arguments of the
	// shared job and of the collect job (--slurm-shared-extra,
	// --slurm-collect-extra): a site that requires a QOS, constraint or
	// reservation on every job gets it on those too, without the trials'
	// --mem or --gres.
	SharedExtra []string
	// Setup are shell lines every batch script the run submits runs
	// before the runner (--slurm-setup: `module load ...`, activating a
	// conda or spack environment), kept in its copy (submit.<attempt>.sh).
	Setup        []string
	CollectExtra []string
	// User is whose queued jobs count against the MaxSubmitJobs limit
	// (sacctmgr); "": $USER.
	User  string
	CPUs  int // cpus per task; 0: derived from the trial's input size
	MemMB int // memory per task in MiB; 0: derived from the trial's input size
	// SharedJob runs the stages every trial shares (ingest, binning,
	// split, vocabulary, counts) as a Slurm job before the trials' array
	// (which depends on it: afterok) when one of them is not cached,
	// instead of on the submit host. SharedCPUs, SharedMemMB and
	// SharedTime are its request (0, "": derived from the data set's
	// size; the trials' Time).
	SharedJob   bool
	SharedCPUs  int
	SharedMemMB int
	SharedTime  string
	// NoCollectJob skips the dependent collect job: run `runner collect`
	// on the submit host instead (needed when the database is not on the
	// shared filesystem).
	NoCollectJob bool
	// CheckpointArgs are the runner flags that give the tasks their
	// checkpoint policy (--checkpoint-every N --checkpoint-minutes M).
	CheckpointArgs []string
	RetryFailed    bool // resubmit failed trials too
	// MemRetryScale, when > 1, multiplies the memory of a resubmission
	// whose trials' tasks were killed for memory (sacct OUT_OF_MEMORY) in
	// the previous submission by it (Snakemake's and Nextflow's retry
	// with more resources); 0 or 1: the memory the options say.
	MemRetryScale float64
	// TimeRetryScale, when > 1, multiplies the time limit of a
	// resubmission whose trials' tasks reached theirs (sacct TIMEOUT) in
	// the previous submission by it; 0 or 1: the time the options say.
	TimeRetryScale float64
	// SignalLead is how long before a task's time limit Slurm sends it
	// SIGTERM (--signal=B:TERM@<seconds>), in seconds, so that it saves a
	// checkpoint and records where it stopped; 0: DefaultSignalLead. A
	// time limit that leaves less than MinTrainSeconds after it is
	// refused.
	SignalLead int

	// Note, Tags and Env are recorded with a new run, as the local executor
	// records them (--note, --tag).
	Note string
	Tags map[string]string
	Env  map[string]string

	// OnReport, when set, is called once the report's files are recorded
	// and before the run ends (so that a run seen ended is complete), e.g.
	// to write the HTML page; it returns the page's path.
	OnReport func(ctx context.Context, st *runs.Store, e *experiment.Experiment, runID int64, reportPath string) (string, error)

	// Client is the scheduler the jobs go to; nil: Slurm's commands on
	// PATH. Executor is the back end's name (runs.executor); "": slurm.
	Client   Scheduler
	Executor string
	Log      *slog.Logger // nil: discard

	// Poll is how often a search's waiting loop (WaitWave) collects
	// results and asks the queue (0: DefaultPoll); Progress, when set, gets
	// the run's status at each poll.
	Poll     time.Duration
	Progress func(*RunStatus)
}

// DefaultPoll is how often a waiting search collects its wave's results.
const DefaultPoll = 10 * time.Second

func (o Options) poll() time.Duration {
	if o.Poll > 0 {
		return o.Poll
	}
	return DefaultPoll
}

// DefaultMaxParallel is the array throttle (--array=...%K) the runner asks
// for when neither --slurm-max-parallel nor the experiment's
// slurm.max_parallel says: a sweep of hundreds of trials does not take a
// shared partition over at once (Nextflow's Slurm executor queues 100
// jobs at most by default, executor.queueSize).
const DefaultMaxParallel = 100

var timeRE = regexp.MustCompile(`^(\d+-)?\d+(:\d\d){0,2}$`)

// DefaultSignalLead is the warning's lead before a task's time limit, in
// seconds (Options.SignalLead).
const DefaultSignalLead = 120

// MinTrainSeconds is the least time a task must have between its start and
// its time-limit warning: a shorter limit would stop every submission
// before it trained (and saved) anything.
const MinTrainSeconds = 60

func (o *Options) signalLead() int {
	if o.SignalLead > 0 {
		return o.SignalLead
	}
	return DefaultSignalLead
}

// checkTime refuses a time limit that leaves no room to train after the
// warning, saying the least it needs.
func (o *Options) checkTime(flag, t string) error {
	if t == "" {
		return nil
	}
	sec, err := ParseTime(t)
	if err != nil {
		return fmt.Errorf("%s %q: %v", flag, t, err)
	}
	lead := int64(o.signalLead())
	if least := lead + MinTrainSeconds; sec < least {
		least = (least + 59) / 60 * 60
		return fmt.Errorf("%s %s leaves %d s before the time-limit warning, which comes %d s before the limit (--slurm-signal-lead): want at least %s, or a shorter lead",
			flag, t, max(0, sec-lead), lead, FormatTime(least))
	}
	return nil
}

// Check reports the first bad option, naming its flag.
func (o *Options) Check() error {
	if o.SignalLead < 0 {
		return fmt.Errorf("--slurm-signal-lead %ds: want >= 0", o.SignalLead)
	}
	if err := o.checkTime("--slurm-time", o.Time); err != nil {
		return err
	}
	if t := extraTime(o.Extra, ""); t != "" {
		if err := o.checkTime("--slurm-extra --time", t); err != nil {
			return err
		}
	}
	switch {
	case o.Time != "" && !timeRE.MatchString(o.Time):
		return fmt.Errorf("--slurm-time %q: want HH:MM:SS, MM, or D-HH:MM:SS", o.Time)
	case o.SharedTime != "" && !timeRE.MatchString(o.SharedTime):
		return fmt.Errorf("--slurm-shared-time %q: want HH:MM:SS, MM, or D-HH:MM:SS", o.SharedTime)
	case o.SharedCPUs < 0 || o.SharedMemMB < 0:
		return fmt.Errorf("shared job: %d cpus, %d MiB: want >= 0", o.SharedCPUs, o.SharedMemMB)
	case o.MaxArraySize < 0:
		return fmt.Errorf("--slurm-max-array-size %d: want >= 0", o.MaxArraySize)
	case o.TrialsPerTask < 0:
		return fmt.Errorf("--slurm-trials-per-task %d: want >= 1", o.TrialsPerTask)
	case o.MaxParallel < 0:
		return fmt.Errorf("--slurm-max-parallel %d: want >= 0", o.MaxParallel)
	case o.CPUs < 0:
		return fmt.Errorf("slurm cpus %d: want >= 0", o.CPUs)
	case o.MemRetryScale < 0 || math.IsNaN(o.MemRetryScale) || math.IsInf(o.MemRetryScale, 0):
		return fmt.Errorf("--slurm-mem-retry-scale %v: want >= 0", o.MemRetryScale)
	case o.TimeRetryScale < 0 || math.IsNaN(o.TimeRetryScale) || math.IsInf(o.TimeRetryScale, 0):
		return fmt.Errorf("--slurm-time-retry-scale %v: want >= 0", o.TimeRetryScale)
	case o.MemMB < 0:
		return fmt.Errorf("slurm memory %d MiB: want >= 0", o.MemMB)
	case o.WorkDir == "":
		return fmt.Errorf("--workdir is empty")
	}
	return nil
}

// absolute makes the paths absolute: the jobs run in other directories,
// on other hosts.
func (o *Options) absolute() error {
	for _, p := range []*string{&o.DB, &o.WorkDir, &o.DataDir, &o.Reports, &o.ConfigPath, &o.Runner} {
		if *p == "" {
			continue
		}
		a, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = a
	}
	return nil
}

// perTask is Options.TrialsPerTask, at least 1.
func (o *Options) perTask() int { return max(1, o.TrialsPerTask) }

func (o *Options) log() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o.Log
}

func (o *Options) client() Scheduler {
	if o.Client == nil {
		return &slurm.Client{}
	}
	return o.Client
}
