package claims

import (
	"strings"
	"testing"

	"goldstone/experiment"
)

// FuzzDecode: whatever claims an experiments file holds, Decode returns
// them or a one-line error naming the file, never panics (.ci/fuzz.sh).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"[[claims]]\nclaim = \"Fig. 2\"\npaper = \"10x\"\ndata = \"artificial\"\nexperiment = \"art\"\nverdict = \"speedup\"\nbaseline = \"gd\"\nmethod = \"goldstone\"\nfactor = 10\n",
		"[[claim_sections]]\ntitle = \"per setting\"\nexperiment = \"art\"\nsection = \"speedup-per-setting\"\nbaseline = \"gd\"\nmethods = [\"goldstone\"]\n",
		"[[claims]]\nclaim = \"keep\"\npaper = \"p\"\ndata = \"d\"\nexperiment = \"art\"\nverdict = \"keep-fields\"\nmethods = [\"goldstone\", \"gd\"]\n[claims.labels]\ngoldstone = \"ours\"\n",
		"[[claims]]\nverdict = 3\n",
		"[[claims]]\nclaim = \"c\"\nverdict = \"nope\"\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, claims string) {
		cfg, err := experiment.ParseConfig("x.toml", []byte(oneExperiment+claims))
		if err != nil {
			return
		}
		if _, err := Decode(cfg); err != nil && (!strings.HasPrefix(err.Error(), "x.toml") || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("error %q: want one line naming x.toml", err)
		}
	})
}
