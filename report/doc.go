// Package report is the scaffolding of a pipeline's report stage: the node
// that reads every trial's result (Add), its directory, loading the
// results of the trials that finished, the Markdown file with the table of
// every summary metric, and the failed trials listed with their errors.
// The pipeline brings only its Draw (figures and the Markdown after the
// table) and its version (Def).
//
// The report runs when some trials failed (the node is Tolerant), and the
// sweep rebuilds it from a run's recorded results; it never trains.
// Markdown text from names and errors goes through MarkdownText or
// MarkdownCode, so it cannot inject HTML into a rendered page.
package report
