package runs

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"
)

// Keys of the run environment (SetEnv) that BuildEnv fills; input data
// digests use InputEnvKey.
const (
	EnvCommand = "command" // the command line, shell-quoted
	EnvTarget  = "target"  // the build target: BuildTarget().String()
	EnvModule  = "module"  // the main module path and version
	EnvDepPre  = "dep "    // "dep <module path>" -> version
	EnvBuild   = "build "  // "build <setting>" -> value (vcs.revision, CGO_ENABLED, ...)
	envInput   = "input "  // "input <path>" -> sha256 content digest
)

// InputEnvKey is the environment key of the digest of an input data file
// or directory.
func InputEnvKey(path string) string { return envInput + path }

// BuildEnv returns the environment of this process that RunInfo has no
// column for: the command line, the build target (GOOS/GOARCH, GOAMD64 or
// GOARM64, build tags: EnvTarget), and from the build information the main
// module, every dependency module's version and the build settings.
func BuildEnv() map[string]string {
	env := map[string]string{EnvCommand: shellJoin(os.Args), EnvTarget: BuildTarget().String()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		env[EnvModule] = bi.Main.Path + " " + bi.Main.Version
		for _, d := range bi.Deps {
			v := d.Version
			if d.Replace != nil {
				v += " => " + d.Replace.Path + " " + d.Replace.Version
			}
			env[EnvDepPre+d.Path] = v
		}
		for _, s := range bi.Settings {
			env[EnvBuild+s.Key] = s.Value
		}
	}
	return env
}

// shellJoin quotes the words of a command line for a POSIX shell where
// needed.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ',' || r == ':' || r == '+' ||
				r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) < 0 {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// SetEnv records environment entries of a run, replacing the value of a
// key it already has.
func (s *Store) SetEnv(ctx context.Context, runID int64, env map[string]string) error {
	if len(env) == 0 {
		return nil
	}
	err := s.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, k := range slices.Sorted(maps.Keys(env)) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO run_env (run_id, key, value) VALUES (?, ?, ?)
				ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value`, runID, k, env[k]); err != nil {
				return fmt.Errorf("%q: %w", k, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set environment of run %d: %w", runID, err)
	}
	return nil
}

// Env returns the environment entries of a run (SetEnv).
func (s *Store) Env(ctx context.Context, runID int64) (map[string]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT key, value FROM run_env WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("environment of run %d: %w", runID, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("environment of run %d: %w", runID, err)
		}
		out[k] = v
	}
	return out, rows.Err()
}

// RecordedTarget returns the build target a run recorded (EnvTarget); for
// runs recorded before that key, it is rebuilt from the recorded build
// settings ("build GOARCH", ...), else from the run's OS and Arch.
func RecordedTarget(ri RunInfo, env map[string]string) string {
	if t := env[EnvTarget]; t != "" {
		return t
	}
	var settings []debug.BuildSetting
	for k, v := range env {
		if s, ok := strings.CutPrefix(k, EnvBuild); ok {
			settings = append(settings, debug.BuildSetting{Key: s, Value: v})
		}
	}
	slices.SortFunc(settings, func(a, b debug.BuildSetting) int { return strings.Compare(a.Key, b.Key) })
	return targetOf(settings, Target{OS: ri.OS, Arch: ri.Arch}).String()
}
