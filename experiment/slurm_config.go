package experiment

import "regexp"

// SlurmConfig is an experiment's [experiments.NAME.slurm] table: how its
// trials are submitted with `runner --executor slurm`. The runner's
// --slurm-* flags override it. It is not part of the experiment's
// configuration hash: where trials run does not change their results.
type SlurmConfig struct {
	Partition   string `toml:"partition"`    // sbatch --partition
	Account     string `toml:"account"`      // sbatch --account
	Time        string `toml:"time"`         // time limit per array task (one trial, or TrialsPerTask): HH:MM:SS, MM or D-HH:MM:SS
	MaxParallel *int   `toml:"max_parallel"` // array tasks running at once (--array=...%K); 0: no limit; absent: the runner's default
	Extra       string `toml:"extra"`        // further sbatch arguments, split as a shell splits words
	CPUs        int    `toml:"cpus"`         // cores per trial; 0: derived from the size of the trial's inputs
	MemMB       int    `toml:"mem_mb"`       // memory per trial in MiB; 0: derived from the size of the trial's inputs
	// TrialsPerTask packs that many trials into each array task, run one
	// after another (--slurm-trials-per-task); absent: 1.
	TrialsPerTask *int `toml:"trials_per_task"`
}

var slurmTimeRE = regexp.MustCompile(`^(\d+-)?\d+(:\d\d){0,2}$`)

// slurmConfig checks an experiment's slurm table; path is its key path
// ("experiments.NAME.slurm").
func (c *Config) slurmConfig(path string, s SlurmConfig) (SlurmConfig, error) {
	switch {
	case s.Time != "" && !slurmTimeRE.MatchString(s.Time):
		return s, c.errorf(path+".time", "%q: want HH:MM:SS, MM or D-HH:MM:SS", s.Time)
	case s.MaxParallel != nil && *s.MaxParallel < 0:
		return s, c.errorf(path+".max_parallel", "must be >= 0, got %d", *s.MaxParallel)
	case s.TrialsPerTask != nil && *s.TrialsPerTask < 1:
		return s, c.errorf(path+".trials_per_task", "must be >= 1, got %d", *s.TrialsPerTask)
	case s.CPUs < 0:
		return s, c.errorf(path+".cpus", "must be >= 0, got %d", s.CPUs)
	case s.MemMB < 0:
		return s, c.errorf(path+".mem_mb", "must be >= 0, got %d", s.MemMB)
	}
	return s, nil
}
