package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"goldstone/experiment"
	"goldstone/internal/atomicfile"
	"goldstone/report/claims"
	"goldstone/runs"
)

var claimsFlags struct {
	readme string
	also   multiFlag
}

func init() {
	commands = append(commands, &command{
		name:    "claims",
		summary: "the paper's claims against our measurements, from the results database (Markdown table)",
		flags: func(fs *flag.FlagSet) {
			fs.Var(&claimsFlags.also, "also-db", "a further results database to read (repeatable): each row comes from the first database, --db first, that holds an ended run of its experiment at the defined settings")
			fs.StringVar(&claimsFlags.readme, "readme", "", "replace the table between the lines '"+claims.Begin+"' and '"+claims.End+"' of this file instead of printing it")
		},
		run: runClaims,
	})
}

// runClaims prints the claims table of the experiments file's [[claims]]
// (package report/claims computes it), or puts it into --readme.
func runClaims(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	cfg, spec, err := loadClaims(g.config.list())
	if err != nil {
		return err
	}
	st, err := openResults(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	ss := claims.Stores{st}
	for _, path := range claimsFlags.also {
		o, err := runs.OpenReadOnly(ctx, path)
		if err != nil {
			return usageErr("--also-db: %v", err)
		}
		defer o.Close()
		ss = append(ss, o)
	}
	table, err := claims.Table(ctx, ss, cfg, spec)
	if err != nil {
		return err
	}
	if claimsFlags.readme == "" {
		_, err := fmt.Fprint(g.stdout, table)
		return err
	}
	b, err := os.ReadFile(claimsFlags.readme)
	if err != nil {
		return usageErr("--readme: %v", err)
	}
	out, err := claims.Replace(string(b), table)
	if err != nil {
		return usageErr("--readme %s: %v", claimsFlags.readme, err)
	}
	return atomicfile.WriteFile(claimsFlags.readme, []byte(out))
}

// loadClaims reads the experiments file and decodes its claims; a file
// without [[claims]] is a usage error (exit 2).
func loadClaims(paths []string) (*experiment.Config, *claims.Spec, error) {
	cfg, err := loadConfig(paths)
	if err != nil {
		return nil, nil, err
	}
	spec, err := claims.Decode(cfg)
	if err != nil {
		return nil, nil, err
	}
	if len(spec.Claims) == 0 {
		return nil, nil, usageErr("%s: %v", strings.Join(paths, ", "), claims.ErrNoClaims)
	}
	return cfg, spec, nil
}

// loadConfig reads and strictly decodes the experiments files (merged in
// order), their claims included: a bad [[claims]] table fails every
// command, as a bad experiment does (exit 2).
func loadConfig(paths []string) (*experiment.Config, error) {
	cfg, err := experiment.LoadConfigs(paths)
	if err == nil {
		_, err = claims.Decode(cfg)
	}
	if err != nil {
		return nil, &exitError{exitUsage, err}
	}
	return cfg, nil
}
