// Package corpus prepares dated text for Dynamic Word Embeddings (Bamler & Mandt 2017): it
// parses Google Books Ngram files (v2 20120701 and v3 20200217) and folders, CSV files or
// JSON Lines files of dated documents (plain, gzip or zstd), stores them as Parquet, builds
// a time-normalised vocabulary, bins years into time steps, splits whole steps into training and held-out sets, and counts weighted
// word-context co-occurrences per step, with rank-one negative counts.
//
// # Pipeline
//
//	ngram files / dated documents
//	  -> IngestNgrams / IngestDir / IngestCSV(Fields) / IngestJSONL
//	                                               segments.parquet (time, doc, weight, tokens)
//	  -> YearTotals -> MakeBins                    time steps (one per year, or wider bins)
//	  -> StepUnigrams -> BuildVocab                V most frequent words, per-step normalised
//	  -> SplitSteps                                held-out steps, never the first or last
//	  -> CountToFiles (or Counter + WriteCounts / WriteMarginals)
//	                                               n+_{ij,t} and per-step marginals
//	                                               (counts: t, word_index, context_index,
//	                                               cooc; marginals: t, word_index, count,
//	                                               cooc, total, cooc_total)
//	  -> LoadCounts / ScanCounts, Step.NegFactors  COO/CSR arrays and n-_{ij,t} = a_i b_j
//
// CheckDir, CheckCSV, CheckJSONL and CheckNgrams read the start of an input as the ingest
// would, so that a wrong header or field stops before a run. Build runs all of it
// (BuildConfig.StepsPerPass bounds the memory of counting).
//
// # Stored representation
//
// A corpus is stored vocabulary-independently as "segments": one Parquet row per token
// sequence, (time int32 year, doc int32, weight int64, tokens repeated string, dictionary
// encoded, zstd). For text a segment is a whole document with weight 1; for n-grams it is
// one (n-gram, year) record with weight match_count (doc is the index of the source file).
// Counting is a further pass over segments once the vocabulary is known, so a vocabulary
// change never needs a re-parse.
//
// # Counting rule
//
// Out-of-vocabulary tokens are removed before windowing (the word2vec convention), so the
// distance d between two kept tokens counts kept tokens only. A target i and a context j
// with k = d-1 kept words between them add weight max(0, 1-k/cmax) (cmax = Window, 4 by
// default: d = 1..4 give 1, .75, .5, .25), times the segment weight. Counting is
// symmetric: each unordered pair adds to both n+_ij and n+_ji, so n+ is symmetric and its
// row sums equal its column sums. Sums are kept exactly as integers in units of 1/cmax.
//
// N-grams overlap: a text pair at distance d lies in 5-d of the 5-grams of a sentence, so
// SchemeAll (every pair of every n-gram) over-counts short distances. SchemeEnds is the
// HistWords scheme (Hamilton et al. 2016, context size 4): only the ordered pairs
// (first token -> later tokens) and (last token -> earlier tokens) of each n-gram. A text
// pair at distance d is the (first -> +d) pair of exactly one 5-gram and the (last -> -d)
// pair of exactly one other, so each direction is counted once, as in running text.
// SchemeCentre is HistWords context size 2: only (middle token -> others). The anchor
// (first, last or middle token) is taken at its raw position: if it is out of vocabulary or
// a marker such as _START_, that n-gram contributes no pairs for it. Distances are still
// measured after removing OOV tokens, so a pair whose raw distance exceeds n-1 is lost.
//
// Unigram counts (for P_t in the negative counts) count each text position once: every
// kept token for text and SchemeAll, the raw first token for SchemeEnds and the raw middle
// token for SchemeCentre, each times the segment weight.
//
// # Tags
//
// Google n-gram tokens may carry part-of-speech suffixes ("burnt_VERB") and the files hold
// pure tag tokens ("_NOUN_", "_START_", "_END_", "_ROOT_"). By default the parser strips
// suffixes and drops tag tokens. The files hold both untagged n-grams and their tagged
// breakdowns, so for counting use NgramOptions{SkipTagged: true, KeepTagTokens: true}
// (CountingNgramOptions): tagged records are dropped as HistWords does, and sentence
// markers keep their positions (they are never vocabulary words).
package corpus
