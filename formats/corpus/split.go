package corpus

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// SplitOptions configures SplitSteps. Held-out steps are never the first or the last step,
// so each lies between two training steps.
type SplitOptions struct {
	// Test and Valid are the numbers of test and validation steps for the random choice.
	Test, Valid int
	// Seed seeds the random choice.
	Seed uint64
	// Every > 0 chooses deterministically instead: the test steps are the multiples of Every
	// in 1..n-2 and, when Valid > 0 (which needs Every >= 2), the validation steps are the
	// first Valid steps s in 1..n-2 with s mod Every == Every/2. Test is ignored.
	Every int
}

// Split is a partition of the steps 0..n-1, each list increasing.
type Split struct {
	Train, Valid, Test []int
}

// Role is the part of a split a step belongs to.
type Role int

const (
	RoleTrain Role = iota
	RoleValid
	RoleTest
)

func (r Role) String() string {
	switch r {
	case RoleTrain:
		return "train"
	case RoleValid:
		return "valid"
	case RoleTest:
		return "test"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Role returns the role of step t.
func (s *Split) Role(t int) Role {
	if _, ok := slices.BinarySearch(s.Test, t); ok {
		return RoleTest
	}
	if _, ok := slices.BinarySearch(s.Valid, t); ok {
		return RoleValid
	}
	return RoleTrain
}

// SplitSteps splits the steps 0..n-1 into training and held-out steps (the paper holds out
// 21 of the 209 years 1800-2008 and trains on 188).
func SplitSteps(n int, opt SplitOptions) (Split, error) {
	var sp Split
	switch {
	case opt.Test < 0 || opt.Valid < 0 || opt.Every < 0:
		return sp, fmt.Errorf("split %d steps: negative option %+v", n, opt)
	case opt.Every > 0:
		if opt.Valid > 0 && opt.Every < 2 {
			return sp, fmt.Errorf("split %d steps: validation steps need Every >= 2, got %d", n, opt.Every)
		}
		for s := 1; s < n-1; s++ {
			switch {
			case s%opt.Every == 0:
				sp.Test = append(sp.Test, s)
			case opt.Valid > len(sp.Valid) && s%opt.Every == opt.Every/2:
				sp.Valid = append(sp.Valid, s)
			}
		}
	default:
		if opt.Test+opt.Valid > n-2 {
			return sp, fmt.Errorf("split %d steps: %d test + %d validation steps exceed the %d inner steps", n, opt.Test, opt.Valid, max(n-2, 0))
		}
		rng := rand.New(rand.NewPCG(opt.Seed, 0x5eed5b1178))
		perm := rng.Perm(max(n-2, 0))
		for k := range perm {
			perm[k]++ // inner steps 1..n-2
		}
		sp.Test = slices.Clone(perm[:opt.Test])
		sp.Valid = slices.Clone(perm[opt.Test : opt.Test+opt.Valid])
		slices.Sort(sp.Test)
		slices.Sort(sp.Valid)
	}
	for s := range n {
		if sp.Role(s) == RoleTrain {
			sp.Train = append(sp.Train, s)
		}
	}
	return sp, nil
}
