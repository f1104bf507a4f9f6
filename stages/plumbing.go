package stages

import "runtime"

func numCPU() int { return runtime.NumCPU() }
