package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"goldstone/experiment"
	"goldstone/runs"
	"goldstone/serve"
)

var serveFlags struct {
	addr   string
	public bool
}

func init() {
	commands = append(commands, &command{
		name:    "serve",
		summary: "a live, read-only web page over the results database: runs, trials with their step and curves, aggregates, compare, the static reports",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&serveFlags.addr, "addr", "127.0.0.1:8080", "address to listen on (HOST:PORT; port 0 picks a free one); a non-loopback address needs --public")
			fs.BoolVar(&serveFlags.public, "public", false, "allow a non-loopback --addr: anyone who reaches it reads every run (there is no account)")
		},
		run: runServe,
	})
}

func runServe(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	warn, err := serve.CheckAddr(serveFlags.addr, serveFlags.public)
	if err != nil {
		return usageErr("%v", err)
	}
	if warn != "" {
		fmt.Fprintln(g.stderr, warn)
	}
	st, err := runs.OpenReadOnly(ctx, g.db)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer st.Close()
	ln, err := net.Listen("tcp", serveFlags.addr)
	if err != nil {
		return usageErr("serve: %v", err)
	}
	srv := &http.Server{
		Handler: serve.New(st, serve.Options{Reports: g.reports, Headline: func(config string) []runs.Headline {
			return experiment.Headline(pipelineOf(config))
		}}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	fmt.Fprintf(g.stdout, "serving %s at http://%s/ (read-only; Ctrl-C stops)\n", g.db, ln.Addr())
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	err = srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return &exitError{exitFailed, fmt.Errorf("serve: %w", err)}
}
