package htmlreport

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/runs"
)

// Round 3, item 9: ESC and the other control characters of a trial's
// name and settings, a run's note and tags and a trial's log reach the
// reports folder as visible escapes (\x1b), never as raw bytes that a
// terminal (cat index.html, cat logs/...) or the browser would act on.
func TestControlCharactersAreEscaped(t *testing.T) {
	st, id, dir := fixture(t)
	ctx := context.Background()
	const esc = "\x1b[31m\x1b]0;pwned\x07"
	const jsonEsc = `\u001b[31m\u001b]0;pwned\u0007` // as recorded in a trial's parameters
	tr := runs.Trial{RunID: id, ID: "tesc", Status: runs.StatusFailed, Error: "bad field " + esc + "\r\u202e",
		Params: map[string]string{"name": `"evil` + jsonEsc + `"`, "variant": `"evil"`, "seed": "1", "lr": `"` + jsonEsc + `"`}}
	if err := st.UpsertTrial(ctx, tr); err != nil {
		t.Fatal(err)
	}
	lp := filepath.Join(t.TempDir(), "evil.log")
	if err := os.WriteFile(lp, []byte("step 1\n\tfield "+esc+" \u009b2J \xff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := st.SetTrialLog(ctx, id, tr.ID, lp); err != nil {
		t.Fatal(err)
	}
	if err := st.SetNote(ctx, id, "note "+esc); err != nil {
		t.Fatal(err)
	}
	if err := st.SetTags(ctx, id, map[string]string{"goal": "tag " + esc}); err != nil {
		t.Fatal(err)
	}
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := Build(ctx, st, id, dir, Options{Headline: testHeadline("artificial")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Localize(ctx, dir, p, MaxLocalOutput); err != nil {
		t.Fatal(err)
	}
	page, err := Write(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	index, err := WriteIndex(ctx, st, filepath.Join(dir, "..", ".."), testHeadline)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "logs", safeName(tr.ID)+".log")
	for _, tc := range []struct {
		path string
		want []string
	}{
		{page, []string{`evil\x1b[31m\x1b]0;pwned\a`, `note \x1b[31m`, `bad field \x1b[31m`, `\r\u202e`}},
		{index, []string{`note \x1b[31m`, `tag \x1b[31m`}},
		{log, []string{"step 1\n\tfield \\x1b[31m\\x1b]0;pwned\\a \\u009b2J \\xff\n"}},
	} {
		b, err := os.ReadFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.IndexFunc(b, func(r rune) bool {
			return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u202e'
		}); i >= 0 {
			t.Errorf("%s: a control character at byte %d: %q", tc.path, i, b[max(0, i-40):min(len(b), i+40)])
		}
		for _, w := range tc.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s does not show %q: %q", tc.path, w, b)
			}
		}
	}
}
