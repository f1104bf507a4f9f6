package main

import (
	"bufio"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"goldstone/experiment"
	"goldstone/report/claims"
)

// The repository's documentation: README.md and every docs/*.md.
const repoRoot = "../.."

func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no docs/*.md")
	}
	return append([]string{filepath.Join(repoRoot, "README.md")}, files...)
}

// docCommand is a runner command line found in the documentation.
type docCommand struct {
	where    string   // file:line
	text     string   // as written, from the runner on
	args     []string // the arguments after the runner, shell words
	synopsis bool     // it has placeholders (NAME, ID, <db>, [--flag]): only names are checked
}

// runnerPrefixes are the ways the documentation calls the runner.
var runnerPrefixes = []string{"go run ./cmd/runner", "./runner", "runner"}

// cutRunner returns s from its runner call on, and the arguments' text, if s
// calls the runner: at its start, or after "&& " or "run: " (a crontab line,
// a CI step).
func cutRunner(s string) (call, rest string, ok bool) {
	starts := []int{0}
	for _, sep := range []string{"&& ", "run: "} {
		if i := strings.Index(s, sep); i >= 0 {
			starts = append(starts, i+len(sep))
		}
	}
	for _, i := range starts {
		for _, p := range runnerPrefixes {
			r, found := strings.CutPrefix(s[i:], p)
			if found && (r == "" || r[0] == ' ') {
				return s[i:], strings.TrimSpace(r), true
			}
		}
	}
	return "", "", false
}

var inlineCode = regexp.MustCompile("`([^`]+)`")

// extractCommands returns the runner command lines of a Markdown file: the
// lines of fenced blocks that call the runner (after an optional "$ "
// prompt) and the inline code spans that do.
func extractCommands(path string) ([]docCommand, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	name, _ := filepath.Rel(repoRoot, path)
	var out []docCommand
	fence := false
	for i, line := range strings.Split(string(b), "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			fence = !fence
			continue
		}
		var cands []string
		if fence {
			cands = []string{strings.TrimPrefix(trim, "$ ")}
		} else {
			for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
				cands = append(cands, m[1])
			}
		}
		for _, c := range cands {
			call, rest, ok := cutRunner(c)
			if !ok {
				continue
			}
			args, synopsis := shellWords(rest)
			if !fence && len(args) == 1 && !strings.HasPrefix(args[0], "-") {
				synopsis = true // a command named in the text, not called: `runner compare`
			}
			out = append(out, docCommand{
				where:    name + ":" + strconv.Itoa(i+1),
				text:     call,
				args:     args,
				synopsis: synopsis,
			})
		}
	}
	return out, nil
}

// shellWords splits s as a POSIX shell would (quotes, backslashes), up to
// the first unquoted comment, pipe, list or redirection operator. synopsis
// reports a placeholder: a word in brackets, an upper-case word (NAME, ID),
// <...> or "...".
func shellWords(s string) (words []string, synopsis bool) {
	var (
		cur    strings.Builder
		in     bool // a word has started
		quote  byte
		quoted bool // the current word had quotes
	)
	flush := func() {
		if in {
			w := cur.String()
			if !quoted && isPlaceholder(w) {
				synopsis = true
			}
			words = append(words, w)
		}
		cur.Reset()
		in, quoted = false, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in, quoted = c, true, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !in, c == '|', c == '&', c == ';', c == '>':
			flush()
			return words, synopsis
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	flush()
	if strings.Contains(s, "...") {
		synopsis = true
	}
	return words, synopsis
}

// isPlaceholder reports a synopsis word: [--flag], NAME, ID, HH:MM:SS, <db>.
func isPlaceholder(w string) bool {
	if strings.ContainsAny(w, "[]<>") || strings.Contains(w, "...") {
		return true
	}
	letters := false
	for _, r := range w {
		switch {
		case unicode.IsUpper(r):
			letters = true
		case r == '_' || r == ':' || r == '-' || r == '=' || unicode.IsDigit(r):
		default:
			return false
		}
	}
	return letters && !strings.HasPrefix(w, "-")
}

// checkCommand checks a documented command line against the runner: the
// command exists, every flag exists for it, it has its positional
// arguments, and (unless it is a synopsis) the experiment exists in the
// configuration it names and every --set names a setting with a valid value.
func checkCommand(c docCommand) error {
	args := c.args
	if c.synopsis {
		args = nil
		for _, a := range c.args {
			a = strings.Trim(a, "[]")
			if a != "" {
				args = append(args, a)
			}
		}
	}
	name, rest, _ := findCommand(args)
	if name == "help" {
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") && lookupCommand(a) == nil && !isPlaceholder(a) {
				return errors.New("help: no command " + a)
			}
		}
		return nil
	}
	cmd := lookupCommand(name)
	if cmd == nil {
		if c.synopsis && (isPlaceholder(name) || name == "command") {
			return checkFlagsOnly(nil, rest)
		}
		return errors.New("no command " + strconv.Quote(name))
	}
	if c.synopsis {
		return checkFlagsOnly(cmd, rest)
	}
	g := &globalOptions{stdout: io.Discard, stderr: io.Discard}
	fs := cmd.flagSet(g, io.Discard)
	var pos []string
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		if fs.NArg() == 0 || len(pos) == cmd.nargs {
			break
		}
		pos, rest = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	if g.version {
		return nil
	}
	if len(pos) != cmd.nargs || fs.NArg() > 0 {
		return errors.New("runner " + name + " wants " + strconv.Itoa(cmd.nargs) + " arguments (" + cmd.args + ")")
	}
	if g.experiment == "" {
		return nil
	}
	cfg, err := experiment.LoadConfig(filepath.Join(repoRoot, g.config.String()))
	if err != nil {
		return err
	}
	e, ok := cfg.Experiments[g.experiment]
	if !ok {
		return errors.New(g.config.String() + ": no experiment " + strconv.Quote(g.experiment))
	}
	return e.Override(g.sets)
}

// checkFlagsOnly checks that every --flag of a synopsis exists: for cmd, or
// for some command when cmd is nil.
func checkFlagsOnly(cmd *command, args []string) error {
	known := map[string]bool{"h": true, "help": true}
	for _, c := range commands {
		if cmd == nil || c == cmd {
			c.flagSet(&globalOptions{}, io.Discard).VisitAll(func(f *flag.Flag) { known[f.Name] = true })
		}
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		f, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !known[f] {
			if cmd != nil {
				return errors.New("runner " + cmd.name + " has no flag --" + f)
			}
			return errors.New("no command has a flag --" + f)
		}
	}
	return nil
}

// Every runner command line in README.md and docs/*.md names a command, its
// flags and an experiment that exist, and its --set values decode; the
// README's own start is run as written (TestDocsStartRuns).
func TestDocsCommands(t *testing.T) {
	n := 0
	for _, path := range docFiles(t) {
		cmds, err := extractCommands(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			n++
			if err := checkCommand(c); err != nil {
				t.Errorf("%s: %s: %v", c.where, c.text, err)
			}
		}
	}
	if n < 50 {
		t.Errorf("found only %d runner command lines in the docs; the extraction is broken", n)
	}
}

// The checker itself: a command, a flag, an experiment, a setting or an
// argument count that does not exist is caught.
func TestDocsCommandCheckerCatches(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{"runner --experiment artificial --set steps=2000 --set seed=1,2", true},
		{"runner plan --experiment artificial --set 'seed=[1,2]' --set k2=5", true},
		{"runner diff 1 2 --format csv | head -3", true},
		{"runner repro --experiment NAME [--run ID]", true},
		{"runner help plan", true},
		{"./runner repro --experiment artificial --quiet >> repro.log 2>&1 || mail x", true},
		{"runner --experiment small", false},
		{"runner --experiment artificial --set stepz=10", false},
		{"runner --experiment artificial --set steps=zero", false},
		{"runner frobnicate", false},
		{"runner results --experiment artificial --colour", false},
		{"runner diff 1", false},
		{"runner repro --experiment NAME [--rn ID]", false},
		{"runner help frobnicate", false},
	} {
		_, rest, ok := cutRunner(tc.line)
		if !ok {
			t.Fatalf("%q: not recognised as a runner call", tc.line)
		}
		args, syn := shellWords(rest)
		err := checkCommand(docCommand{where: "test", text: tc.line, args: args, synopsis: syn})
		if (err == nil) != tc.ok {
			t.Errorf("%q: error %v, want ok = %v", tc.line, err, tc.ok)
		}
	}
}

var mdLink = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)

// headingAnchors returns the GitHub anchors of a Markdown file's headings.
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if k := seen[a]; k > 0 {
			out[a+"-"+strconv.Itoa(k)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// Every relative link of README.md and docs/*.md names a file of the
// repository (never one outside it) and, with #anchor, a heading of it;
// README links every doc.
func TestDocsLinks(t *testing.T) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	readmeLinks := map[string]bool{}
	for _, path := range docFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(repoRoot, path)
		fence := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				dest := path
				if file != "" {
					dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
				}
				abs, _ := filepath.Abs(dest)
				if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s:%d: link %s leads outside the repository", name, i+1, target)
					continue
				}
				db, err := os.ReadFile(dest)
				if err != nil {
					if fi, serr := os.Stat(dest); serr == nil && fi.IsDir() && anchor == "" {
						continue
					}
					t.Errorf("%s:%d: link %s: %v", name, i+1, target, err)
					continue
				}
				if name == "README.md" && file != "" {
					readmeLinks[filepath.ToSlash(filepath.Clean(file))] = true
				}
				if anchor != "" && !headingAnchors(string(db))[anchor] {
					t.Errorf("%s:%d: link %s: no heading with anchor #%s", name, i+1, target, anchor)
				}
			}
		}
	}
	for _, path := range docFiles(t)[1:] {
		rel, _ := filepath.Rel(repoRoot, path)
		if !readmeLinks[filepath.ToSlash(rel)] {
			t.Errorf("README.md does not link %s", filepath.ToSlash(rel))
		}
	}
}

// README's first screen (a 50-line terminal) holds the one-minute start:
// its heading and its whole command block.
func TestDocsFirstScreen(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	start := slices.Index(lines, "## Start in a minute")
	if start < 0 {
		t.Fatal(`README.md: no "## Start in a minute" heading`)
	}
	fences := 0
	end := -1
	for i := start; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "```") {
			fences++
			if fences == 2 {
				end = i
				break
			}
		}
	}
	if end < 0 || end >= 50 {
		t.Errorf("README.md: the one-minute start ends on line %d, beyond the first screen (50 lines)", end+1)
	}
}

// startBlock returns the command lines of README's one-minute start.
func startBlock(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	state := 0 // 0 before the heading, 1 before the fence, 2 inside
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case state == 0 && line == "## Start in a minute":
			state = 1
		case state == 1 && strings.HasPrefix(line, "```"):
			state = 2
		case state == 2 && strings.HasPrefix(line, "```"):
			return out
		case state == 2:
			out = append(out, line)
		}
	}
	t.Fatal("README.md: no command block under '## Start in a minute'")
	return nil
}

// The README's one-minute start runs as written, in a fresh directory with
// the repository's experiments.toml: every runner line exits 0 and the
// report it opens exists. The build line is the test binary's build.
func TestDocsStartRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the one-minute start trains 10 small trials")
	}
	e := newEnv(t)
	cfg, err := os.ReadFile(filepath.Join(repoRoot, "experiments.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "experiments.toml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, line := range startBlock(t) {
		cmdText, _, _ := strings.Cut(line, "#")
		words, _ := shellWords(cmdText)
		switch {
		case len(words) == 0:
		case words[0] == "go" && len(words) > 1 && words[1] == "build":
			// runnerBin is this build.
		case words[0] == "xdg-open" || words[0] == "open":
			if len(words) != 2 {
				t.Fatalf("README start: %q: want one file to open", line)
			}
			if _, err := os.Stat(filepath.Join(e.dir, words[1])); err != nil {
				t.Errorf("README start: %q: %v", line, err)
			}
		default:
			_, rest, ok := cutRunner(cmdText)
			if !ok {
				t.Fatalf("README start: %q is neither the build, a runner call nor opening the report", line)
			}
			args, _ := shellWords(rest)
			out, errs, code := e.run(args...)
			if code != 0 {
				t.Errorf("README start: %q: exit %d\nstdout:\n%s\nstderr:\n%s", line, code, out, errs)
			}
			ran++
		}
	}
	if ran < 3 {
		t.Errorf("README start: ran %d runner commands, want list, a run and results", ran)
	}
}

// The cheap documented commands run as written: every list, help, --help
// and --version line, and every plan of an artificial experiment (which
// trains nothing), in a fresh directory with the repository's
// experiments.toml.
func TestDocsCheapCommandsRun(t *testing.T) {
	e := newEnv(t)
	cfg, err := os.ReadFile(filepath.Join(repoRoot, "experiments.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "experiments.toml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, path := range docFiles(t) {
		cmds, err := extractCommands(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			if c.synopsis || slices.Contains(c.args, "--config") || slices.Contains(c.args, "-config") {
				continue
			}
			name, rest, _ := findCommand(c.args)
			cheap := name == "list" || name == "help" || slices.Contains(c.args, "--help") || slices.Contains(c.args, "--version")
			if name == "plan" {
				g := &globalOptions{}
				fs := lookupCommand("plan").flagSet(g, io.Discard)
				cheap = fs.Parse(rest) == nil && strings.HasPrefix(g.experiment, "artificial")
			}
			if !cheap {
				continue
			}
			ran++
			if out, errs, code := e.run(c.args...); code != 0 {
				t.Errorf("%s: %s: exit %d\nstdout:\n%s\nstderr:\n%s", c.where, c.text, code, out, errs)
			}
		}
	}
	if ran == 0 {
		t.Error("no cheap documented command found to run")
	}
}

// docs/results.md holds the generated claims table between its markers,
// once, so 'runner claims --readme docs/results.md' can refresh it.
func TestDocsClaimsTableMarkers(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, claims.Begin+"\n"), strings.Index(s, claims.End+"\n")
	if i < 0 || j < i || strings.Count(s, claims.Begin) != 1 || strings.Count(s, claims.End) != 1 {
		t.Errorf("docs/results.md: want the claims table once between %q and %q", claims.Begin, claims.End)
	}
}
