package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"

	"goldstone/experiment"
	"goldstone/pipeline"
)

var wordsFlags struct {
	age   string
	to    float64
	from  float64
	k     int
	trial string
}

func init() {
	commands = append(commands, &command{
		name:    "words",
		summary: "word aging: the words of an earlier time nearest to a word of a later time (dwe experiments)",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&wordsFlags.age, "age", "", "query word(s), comma-separated")
			fs.Float64Var(&wordsFlags.to, "to", math.NaN(), "time (year) to age the word to (default: the first time step)")
			fs.Float64Var(&wordsFlags.from, "from", math.NaN(), "time (year) of the query (default: the last time step)")
			fs.IntVar(&wordsFlags.k, "k", 5, "number of words to list")
			fs.StringVar(&wordsFlags.trial, "trial", "", "trial id or variant name (default: every trial)")
		},
		run: runWords,
	})
}

func runWords(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	if wordsFlags.age == "" {
		return usageErr("missing --age WORD")
	}
	e, err := g.loadExperiment()
	if err != nil {
		return err
	}
	p, _ := experiment.LookupPipeline(e.Pipeline)
	ager, ok := p.(experiment.WordAger)
	if !ok {
		return usageErr("experiment %s is a %s experiment; words needs an experiment of a pipeline with word embeddings (%s)", e.Name, e.Pipeline, strings.Join(experiment.WordAgers(), ", "))
	}
	trials := e.Trials()
	built, err := experiment.Build(ctx, e, trials, experiment.Env{DataDir: g.dataDir})
	if err != nil {
		return &exitError{exitUsage, err}
	}
	items, err := pipeline.Plan(ctx, built.Graph, pipeline.Options{WorkDir: g.workdir})
	if err != nil {
		return &exitError{exitUsage, err}
	}
	cached := map[string]pipeline.PlanItem{}
	for _, it := range items {
		cached[it.Node] = it
	}
	shown := 0
	for _, tn := range built.Trials {
		if wordsFlags.trial != "" && wordsFlags.trial != tn.Trial.ID && wordsFlags.trial != tn.Trial.Variant {
			continue
		}
		it := cached[tn.Nodes[0]] // the train node; its "model" output holds the means
		if !it.Cached {
			fmt.Fprintf(g.stdout, "%s (%s): not trained yet (%s)\n", tn.Trial.ID, tn.Trial.Name, it.Reason)
			continue
		}
		emb, err := ager.LoadWords(func(name string) string { return pipeline.CachedOutput(g.workdir, it, name) })
		if err != nil {
			return err
		}
		from, to := emb.NearestStep(wordsFlags.from, emb.Steps()-1), emb.NearestStep(wordsFlags.to, 0)
		fmt.Fprintf(g.stdout, "%s (%s): from %.0f to %.0f\n", tn.Trial.ID, tn.Trial.Name, emb.Time(from), emb.Time(to))
		for _, q := range strings.Split(wordsFlags.age, ",") {
			q = strings.TrimSpace(q)
			words, err := emb.Age(q, from, to, wordsFlags.k)
			if err != nil {
				fmt.Fprintf(g.stdout, "  %s: %v\n", q, err)
				continue
			}
			fmt.Fprintf(g.stdout, "  %s -> %s\n", q, strings.Join(words, ", "))
		}
		shown++
	}
	if shown == 0 {
		return usageErr("no trained trial of %s matches; run 'runner --experiment %s' first", e.Name, e.Name)
	}
	return nil
}
