package experiment

// Optional interfaces of a Pipeline for commands that only some pipelines
// answer. The command line asks the registry for them, so it knows no
// pipeline by name.

// ExampleFile is a small data file of a pipeline's example experiments
// (runner example-data).
type ExampleFile struct {
	Name  string                  // file name in the examples directory
	What  string                  // what it holds, one line for the user
	Write func(path string) error // writes it atomically
}

// Exampler is a pipeline with example data files.
type Exampler interface {
	ExampleFiles() []ExampleFile
}

// ExampleFiles returns the example files of every registered pipeline that
// has some (Exampler), pipelines in name order.
func ExampleFiles() []ExampleFile {
	var out []ExampleFile
	for _, name := range PipelineNames() {
		p, _ := LookupPipeline(name)
		if ex, ok := p.(Exampler); ok {
			out = append(out, ex.ExampleFiles()...)
		}
	}
	return out
}

// WordAger is a pipeline whose trained trials answer word-aging queries
// (runner words): the words of an earlier time nearest to a word of a
// later time.
type WordAger interface {
	// LoadWords reads the trained model of a trial whose train node (the
	// trial's first node) wrote its outputs; output returns the path of
	// one of them by name.
	LoadWords(output func(name string) string) (WordModel, error)
}

// WordModel is a trained model of dated word embeddings.
type WordModel interface {
	// NearestStep is the time step whose time is nearest to t, or def
	// when t is NaN.
	NearestStep(t float64, def int) int
	// Steps is the number of time steps; Time the time (year) of one.
	Steps() int
	Time(step int) float64
	// Age returns the k words of step to nearest to word at step from.
	Age(word string, from, to, k int) ([]string, error)
}

// WordAgers returns the names of the registered pipelines that answer
// word-aging queries.
func WordAgers() []string {
	var out []string
	for _, name := range PipelineNames() {
		p, _ := LookupPipeline(name)
		if _, ok := p.(WordAger); ok {
			out = append(out, name)
		}
	}
	return out
}
