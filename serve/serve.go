// Package serve is `runner serve`: a read-only web page over the results
// database. It lists the runs with their live status, shows a run's trials
// with their current step, headline metrics and metric curves (SVG drawn
// here), the run's aggregates over seeds, a compare view of two runs, and
// serves the static reports. Pages whose run is running re-read their live
// part every few seconds (static/live.js, embedded; no external script).
// Every text from the database is escaped (html/template, and
// safetext.Escape for control characters). Nothing here writes.
package serve

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"goldstone/runs"
)

//go:embed static
var static embed.FS

// Options configure a Server.
type Options struct {
	// Reports is the directory of the static reports (--reports),
	// served read-only under /reports/; "" serves none.
	Reports string
	// Headline gives the headline metrics of a run from its recorded
	// configuration (JSON): the trial table's columns and the aggregates.
	// nil: none.
	Headline func(configJSON string) []runs.Headline
	// Every is how often a live page re-reads itself; 0 means 3 s.
	Every time.Duration
}

// Server answers the pages. Its store should be opened read-only
// (runs.OpenReadOnly).
type Server struct {
	st  *runs.Store
	opt Options
	mux *http.ServeMux
}

// New returns the server over st.
func New(st *runs.Store, opt Options) *Server {
	if opt.Every <= 0 {
		opt.Every = 3 * time.Second
	}
	s := &Server{st: st, opt: opt, mux: http.NewServeMux()}
	s.mux.HandleFunc("/{$}", s.page(s.runsData, "runs"))
	s.mux.HandleFunc("/live/runs", s.page(s.runsData, "runs-live"))
	s.mux.HandleFunc("/run/{id}", s.page(s.runData, "run"))
	s.mux.HandleFunc("/run/{id}/live", s.page(s.runData, "run-live"))
	s.mux.HandleFunc("/compare", s.page(s.compareData, "compare"))
	s.mux.HandleFunc("/api/runs", s.api(s.runsData))
	s.mux.HandleFunc("/api/run/{id}", s.api(s.runData))
	s.mux.Handle("/static/", http.FileServerFS(static))
	if opt.Reports != "" {
		s.mux.Handle("/reports/", http.StripPrefix("/reports/", http.FileServer(http.Dir(opt.Reports))))
	}
	return s
}

// ServeHTTP answers GET and HEAD only: nothing here changes anything.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "read-only: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'")
	s.mux.ServeHTTP(w, r)
}

// httpError is an error with the HTTP status it answers.
type httpError struct {
	code int
	err  error
}

func (e *httpError) Error() string { return e.err.Error() }

func badRequest(format string, a ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Errorf(format, a...)}
}

// fail answers err: a bad request or a run not found as such, anything
// else as an internal error; one line, the client's text not echoed raw.
func fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var he *httpError
	switch {
	case errors.As(err, &he):
		code = he.code
	case errors.Is(err, runs.ErrNotFound):
		code = http.StatusNotFound
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, oneLine(err.Error()))
}

type dataFunc func(ctx context.Context, r *http.Request) (any, error)

func (s *Server) page(data dataFunc, tmpl string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d, err := data(r.Context(), r)
		if err != nil {
			fail(w, err)
			return
		}
		var b strings.Builder
		if err := pages.ExecuteTemplate(&b, tmpl, d); err != nil {
			fail(w, err)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, b.String())
	}
}

func (s *Server) api(data dataFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d, err := data(r.Context(), r)
		if err != nil {
			fail(w, err)
			return
		}
		b, err := json.MarshalIndent(d, "", " ")
		if err != nil {
			fail(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(append(b, '\n'))
	}
}

// runID reads the {id} of the path, or ?name= of the query.
func runID(r *http.Request, name string) (int64, error) {
	v := r.PathValue(name)
	if v == "" {
		v = r.URL.Query().Get(name)
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, badRequest("run id %s: want a positive integer", strconv.QuoteToASCII(cut(v, 40)))
	}
	return id, nil
}

// reportURL is the URL of a run's static report when its file exists.
func (s *Server) reportURL(experiment string, id int64) string {
	if s.opt.Reports == "" || strings.ContainsAny(experiment, `/\`) || experiment == ".." || experiment == "." {
		return ""
	}
	run := "run-" + strconv.FormatInt(id, 10)
	if _, err := os.Stat(filepath.Join(s.opt.Reports, experiment, run, "index.html")); err != nil {
		return ""
	}
	return "/reports/" + pathEscape(experiment) + "/" + run + "/"
}

// indexURL is the URL of the reports' index when it exists.
func (s *Server) indexURL() string {
	if s.opt.Reports == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(s.opt.Reports, "index.html")); err != nil {
		return ""
	}
	return "/reports/"
}

// CheckAddr checks a listen address: a loopback one (127.0.0.0/8, ::1,
// localhost) is served as it is; another (an empty host means every
// interface) only when public, and then warn is a one-line warning.
func CheckAddr(addr string, public bool) (warn string, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr %s: want HOST:PORT, e.g. 127.0.0.1:8080: %v", strconv.Quote(addr), err)
	}
	if host == "localhost" {
		return "", nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return "", nil
	}
	if !public {
		return "", fmt.Errorf("--addr %s is not a loopback address: the page has no account and would show every run to the network; add --public to serve it there anyway", addr)
	}
	return fmt.Sprintf("warning: serving %s beyond this machine (--public): anyone who can reach it reads every run, with no account", addr), nil
}
