package settings

// Seeded is the setting every trial has, whatever its pipeline: the seed of
// its random numbers, recorded with the trial (experiment.Trial.Seed, the seed
// column of the results). A pipeline declares it by embedding Seeded in its
// settings struct (train.LoopSettings does); stages refuses a pipeline
// whose settings lack it.
type Seeded struct {
	Seed int `set:"seed" default:"1" check:">=0" doc:"seed of the trial: initialisation, data generation, minibatches"`
}
