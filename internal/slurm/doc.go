// Package slurm talks to a Slurm cluster through its command-line tools:
// sbatch to submit a batch script (an array job or a dependent job), squeue
// to read what the queue says about a job's tasks, scancel to cancel them.
//
// It holds no state of its own: the per-task result files of a run are the
// truth about its trials, and the queue is only a hint (a finished task
// leaves the queue; sacct is often absent). So Queue makes exactly one squeue
// call per job (all of an array's tasks at once, -r), and a Poller allows at
// most one such call per job per interval (30 s), backing off further while
// the controller does not answer.
//
// Every failure of a command is an error of one line that names the command
// and quotes its message. Transient ones (the controller busy or out of
// reach) are retried with exponential back-off; others are returned at once.
package slurm
