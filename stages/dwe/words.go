package dwe

import (
	"goldstone/experiment"
	"goldstone/formats/corpus"
	mdwe "goldstone/models/dwe"
)

// LoadWords implements experiment.WordAger: the embedding of a trial's
// train-dwe output "model".
func (Pipeline) LoadWords(output func(name string) string) (experiment.WordModel, error) {
	return LoadEmbedding(output("model"))
}

// Steps implements experiment.WordModel.
func (e *Embedding) Steps() int { return e.T }

// Time implements experiment.WordModel: the time stamp of step t.
func (e *Embedding) Time(t int) float64 { return e.Times[t] }

// Age implements experiment.WordModel: the k words of step to nearest to
// word at step from (models/dwe WordAging).
func (e *Embedding) Age(word string, from, to, k int) ([]string, error) {
	return mdwe.WordAging(e.Means, e.Blocks, e.Vocab, word, from, to, k)
}

// ExampleFiles implements experiment.Exampler: the dated JSON Lines corpus
// of example-jsonl-corpus.
func (Pipeline) ExampleFiles() []experiment.ExampleFile {
	return []experiment.ExampleFile{{Name: corpus.ExampleCorpusFile, Write: corpus.WriteExampleCorpus,
		What: "a dated JSON Lines corpus (fields date and text)"}}
}
