package corpus

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"goldstone/internal/atomicfile"
)

// ExampleCorpusFile is the name of the example JSON Lines corpus (WriteExampleCorpus)
// under the examples folder (runner example-data).
const ExampleCorpusFile = "corpus.jsonl"

// exampleTopics are the word groups of the example corpus. The words of "shift" move
// from the first context group to the second over the years: their meaning drifts.
var exampleTopics = struct {
	common, early, late, shift, stable []string
}{
	common: strings.Fields("the a of and to in is was for on with as by at from that this it be are"),
	early:  strings.Fields("horse carriage letter telegraph wire candle steam coal lamp road post office ink paper clerk"),
	late:   strings.Fields("engine electric screen network software battery signal digital email online device charge data code"),
	shift:  strings.Fields("mail line cell tablet mouse web stream cloud"),
	stable: strings.Fields("river mountain bread water family child house garden winter summer song market"),
}

// WriteExampleCorpus writes the example corpus of experiments.toml's example-jsonl-corpus:
// JSON Lines, one document per line with the fields "date" (an ISO date, 1900-1999) and
// "text", in which a few words change their company over the century. The content
// depends on nothing but this code (a fixed seed).
func WriteExampleCorpus(path string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		if err := exampleCorpus(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

func exampleCorpus(w io.Writer) error {
	rng := rand.New(rand.NewPCG(2017, 53))
	tp := exampleTopics
	pick := func(ws []string) string { return ws[rng.IntN(len(ws))] }
	first := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	enc := json.NewEncoder(w)
	for k := range 1500 {
		day := first.AddDate(0, 0, rng.IntN(100*365))
		late := float64(day.Year()-1900) / 99 // share of the late context
		var words []string
		for range 60 {
			switch r := rng.Float64(); {
			case r < 0.35:
				words = append(words, pick(tp.common))
			case r < 0.55:
				// a drifting word next to the context of its time
				ctx := tp.early
				if rng.Float64() < late {
					ctx = tp.late
				}
				words = append(words, pick(tp.shift), pick(ctx), pick(ctx))
			case r < 0.7:
				ctx := tp.early
				if rng.Float64() < late {
					ctx = tp.late
				}
				words = append(words, pick(ctx))
			default:
				words = append(words, pick(tp.stable), pick(tp.stable))
			}
		}
		doc := struct {
			ID   string `json:"id"`
			Date string `json:"date"`
			Text string `json:"text"`
		}{fmt.Sprintf("doc-%04d", k), day.Format("2006-01-02"), strings.Join(words, " ")}
		if err := enc.Encode(doc); err != nil {
			return err
		}
	}
	return nil
}
