package main

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// prunedDWE is a TPE search with ASHA over dynamic word embeddings on the
// generated corpus: 9 points to step 3, the best third on to 9 and 27. The
// minibatch phase (20 steps) and the variational noise draw from the
// trial's random source at every step, across both promotions.
const prunedDWE = `
[experiments.pw]
pipeline = "dwe"
[experiments.pw.settings]
` + dweData + `steps = 27
inference = "%s"
minibatch_steps = 20
minibatch_words = 20
k2 = 10
optimizer = "adam"
log_every = 1
queries = ["river"]
[experiments.pw.grid]
seed = [1]
[experiments.pw.search]
sampler = "tpe"
trials = 9
wave = 3
seed = 5
objective = "valid_ll"
direction = "maximize"
pruner = "asha"
min_steps = 3
eta = 3
[experiments.pw.search.space]
lr = { log_uniform = [0.02, 0.3] }
gauge = { choice = ["none", "goldstone"] }
k1 = { int = [2, 6], when = { gauge = ["goldstone"] } }
`

// TestPrunedDWESearchPromotes: a pruned dwe search (MAP and variational)
// promotes its points from the checkpoints of the rung below, with no step
// redone, and the promoted trial at the last rung and one pruned at step 9
// have the summary and series, bit for bit, of the same configuration run
// from step 0 to their length in an empty work directory.
func TestPrunedDWESearchPromotes(t *testing.T) {
	corpus := writeDWECorpus(t)
	for _, inf := range []string{"map", "vi"} {
		t.Run(inf, func(t *testing.T) {
			e := newEnv(t)
			e.writeConfig(fmt.Sprintf(prunedDWE, corpus, inf))
			e.mustRun(0, "--experiment", "pw", "--jobs", "2", "--quiet")
			db := e.db()
			top := promotedTrial(t, db, "status = 'done' AND json_extract(params_json, '$.name') NOT LIKE '%@%'", "step 9 of 27")
			mid := promotedTrial(t, db, "status = 'pruned' AND json_extract(params_json, '$.name') LIKE '%@9 %'", "step 3 of 9")
			for _, tr := range []string{top, mid} {
				var lr float64
				var gauge, k1, steps string
				if err := db.QueryRow(`SELECT json_extract(params_json, '$.lr'), json_extract(params_json, '$.gauge'),
					coalesce(json_extract(params_json, '$.k1'), ''), json_extract(params_json, '$.steps') FROM trial_rows WHERE run_id = 1 AND trial = ?`, tr).
					Scan(&lr, &gauge, &k1, &steps); err != nil {
					t.Fatal(err)
				}
				s := newEnv(t)
				cfg := fmt.Sprintf(prunedDWE, corpus, inf)
				cfg = cfg[:strings.Index(cfg, "[experiments.pw.search]")]
				s.writeConfig(cfg)
				args := []string{"--experiment", "pw", "--jobs", "1", "--quiet", "--set", "lr=" + fmt.Sprint(lr), "--set", "gauge=" + gauge, "--set", "steps=" + steps}
				if k1 != "" {
					args = append(args, "--set", "k1="+k1)
				}
				s.mustRun(0, args...)
				sdb := s.db()
				var ref string
				if err := sdb.QueryRow(`SELECT trial FROM trial_rows WHERE run_id = 1`).Scan(&ref); err != nil {
					t.Fatal(err)
				}
				gs, rs := trialSummary(t, db, tr), trialSummary(t, sdb, ref)
				if !reflect.DeepEqual(gs, rs) {
					t.Errorf("trial %s (lr %v, %s, k1 %s, %s steps): summary\n%v\nfrom step 0:\n%v", tr, lr, gauge, k1, steps, gs, rs)
				}
				if g, r := trialSeries(t, db, tr), trialSeries(t, sdb, ref); len(g) == 0 || !reflect.DeepEqual(g, r) {
					t.Errorf("trial %s: %d series points, from step 0 %d; not the same", tr, len(g), len(r))
				}
			}
		})
	}
}

// promotedTrial is the first trial of run 1 matching where whose log says
// it resumed from the checkpoint of the step given.
func promotedTrial(t *testing.T, db *sql.DB, where, from string) string {
	t.Helper()
	rows, err := db.Query(`SELECT trial, log_path FROM trial_rows WHERE run_id = 1 AND ` + where + ` ORDER BY trial`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var seen []string
	for rows.Next() {
		var tr, log string
		if err := rows.Scan(&tr, &log); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "resumed from the checkpoint of "+from) {
			return tr
		}
		seen = append(seen, filepath.Base(log))
	}
	t.Fatalf("no trial (%s) resumed from the checkpoint of %s; logs %v", where, from, seen)
	return ""
}

// trialSummary is a trial's summary metrics but timings, as bits (run 1;
// searchSummaries keyed by trial).
func trialSummary(t *testing.T, db *sql.DB, trial string) map[string]uint64 {
	t.Helper()
	m := map[string]uint64{}
	for k, v := range searchSummaries(t, db) {
		if name, ok := strings.CutPrefix(k, trial+" "); ok {
			m[name] = v
		}
	}
	return m
}

// trialSeries is a trial's series points, in order.
func trialSeries(t *testing.T, db *sql.DB, trial string) []string {
	t.Helper()
	rows, err := db.Query(`SELECT metric, step, value FROM series WHERE run_id = 1 AND trial = ? ORDER BY metric, step`, trial)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		var s int
		var v sql.NullFloat64
		if err := rows.Scan(&k, &s, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %x %v", k, s, math.Float64bits(v.Float64), v.Valid))
	}
	return out
}
