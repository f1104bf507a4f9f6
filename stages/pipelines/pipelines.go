// Package pipelines is the registry of goldstone's pipelines: importing it
// registers every pipeline with experiment.Register. Adding a pipeline is a new
// package below stages/ (a experiment.Pipeline that registers itself in init)
// and one import line here.
package pipelines

import (
	_ "goldstone/stages/artificial" // pipeline "artificial"
	_ "goldstone/stages/dwe"        // pipeline "dwe"
	_ "goldstone/stages/movielens"  // pipeline "movielens"
)
