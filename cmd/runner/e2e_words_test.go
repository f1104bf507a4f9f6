package main

// Issue 32, item 6: errors in the user's words.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goNames matches what a user-facing error must not hold: a Go package's
// qualified name (strconv.ParseInt, toml.LocalDate) or Go's parse words.
var goNames = regexp.MustCompile(`\b(strconv|toml|time|fmt|os|json|errors|csv)\.[A-Z]\w*|invalid syntax`)

// TestErrorsInTheUsersWords: a header split at the wrong delimiter names
// the delimiter that would give its columns; a date read as a unix time
// names time_format and the value at file:line; an unquoted TOML date
// says to quote it; --set time_format on a ratings.dat file keeps the
// recognised layout. None of the messages holds a Go name.
func TestErrorsInTheUsersWords(t *testing.T) {
	cols := "user_column = \"user_id\"\nitem_column = \"imdb_id\"\nrating_column = \"score\"\ntime_column = \"rated_on\"\n"
	for _, tc := range []struct {
		name, body, config string
		want               []string
	}{
		{"delimiter", "user_id;imdb_id;score;rated_on\nu1;tt1;4;2020-08-26\n",
			ownConfig("reviews.csv", cols+"time_format = \"rfc3339\""),
			[]string{"reviews.csv:1", `no column "user_id" (user_column)`, `split at ";": set delimiter = ";"`}},
		{"tab delimiter", "user_id\timdb_id\tscore\trated_on\nu1\ttt1\t4\t2020-08-26\n",
			ownConfig("reviews.csv", cols+"time_format = \"rfc3339\""),
			[]string{"reviews.csv:1", `set delimiter = "tab"`}},
		{"time format", "user_id,imdb_id,score,rated_on\nu1,tt1,4,1598400000\nu1,tt2,4,2020-08-26\n",
			ownConfig("reviews.csv", cols),
			[]string{"reviews.csv:3", `field rated_on: "2020-08-26" is not a unix time in seconds (time_format = "unix")`, `set time_format = "rfc3339"`}},
		{"unquoted date", "user_id,imdb_id,score,rated_on\nu1,tt1,4,26/08/2020\n",
			ownConfig("reviews.csv", cols+"time_format = 2006-01-02"),
			[]string{"experiments.toml:", "experiments.own.settings.time_format: want string, got an unquoted date or time 2006-01-02 (write it in quotes: \"2006-01-02\")"}},
		{"detection dropped", "1::10::4::978300760\n2::10::5::978300761\n",
			ownConfig("ratings.dat", "header = false\n"),
			[]string{"ratings.dat:1", `item_column = 2 but the line has 1 fields separated by ","`, `split at "::": set delimiter = "::"`}},
		{"detection dropped, named", "1::10::4::978300760\n2::10::5::978300761\n",
			ownConfig("ratings.dat", "delimiter = \";\"\n"),
			[]string{"ratings.dat:1", `looks like a MovieLens ratings.dat file`, `delimiter = "::", header = false`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			file := "reviews.csv"
			if strings.Contains(tc.name, "detection") {
				file = "ratings.dat"
			}
			os.WriteFile(filepath.Join(e.dir, file), []byte(tc.body), 0o644)
			e.writeConfig(tc.config)
			_, errs, code := e.run("plan", "--experiment", "own")
			line := errorLine(t, errs)
			if code != 2 {
				t.Errorf("exit %d, want 2: %s", code, line)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q does not say %q", line, w)
				}
			}
			if m := goNames.FindString(line); m != "" {
				t.Errorf("%q holds a Go name: %s", line, m)
			}
		})
	}
	// --set time_format on a ratings.dat file: the layout is still
	// recognised (it was dropped, and the error asked for a userId column).
	e := newEnv(t)
	os.WriteFile(filepath.Join(e.dir, "ratings.dat"), []byte(strings.Repeat("1::10::4::978300760000\n2::11::5::978300761000\n3::10::3::978300762000\n", 20)), 0o644)
	e.writeConfig(ownConfig("ratings.dat", ""))
	if out, errs, code := e.run("plan", "--experiment", "own", "--set", "time_format=unix_ms"); code != 0 {
		t.Errorf("--set time_format=unix_ms on ratings.dat: exit %d: %s%s", code, out, errs)
	}
	// --set of a date layout needs no quotes in the shell.
	if _, errs, code := e.run("plan", "--experiment", "own", "--set", "time_format=2006-01-02"); code != 2 || !strings.Contains(errs, `does not match the time layout "2006-01-02"`) {
		t.Errorf("--set time_format=2006-01-02: exit %d: %s", code, errs)
	}
}
