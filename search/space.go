package search

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"goldstone/optim"
)

// Dist is the kind of a parameter's distribution.
type Dist int

const (
	// Uniform is a float drawn from [Lo, Hi] (log-uniformly when Log).
	Uniform Dist = iota
	// Int is an integer drawn from [Lo, Hi] (log-uniformly when Log).
	Int
	// Choice is one of Choices.
	Choice
)

func (d Dist) String() string {
	switch d {
	case Uniform:
		return "uniform"
	case Int:
		return "int"
	}
	return "choice"
}

// Param is one searched setting.
type Param struct {
	Key     string
	Dist    Dist
	Lo, Hi  float64 // Uniform and Int: the closed range (Int: integral values)
	Log     bool    // Uniform and Int: drawn uniformly in log space (Lo > 0)
	Choices []any   // Choice: the values (comparable: string, int64, float64, bool)
	// When makes the parameter conditional: it exists only in points
	// where another (unconditional) parameter took one of some values.
	When *Condition
}

// Condition is the condition of a conditional parameter.
type Condition struct {
	Key    string
	Values []any
}

// Space is a search space: its parameters, each conditional one after the
// parameter its condition names.
type Space struct {
	Params []Param
}

// Point is one suggestion: a value per active parameter (float64 for
// Uniform, int64 for Int, one of the choices for Choice). A conditional
// parameter whose condition fails is absent.
type Point map[string]any

// Observation is a suggested point and the value its trials gave,
// minimized; a value that is not finite is the worst.
type Observation struct {
	Point Point
	Value float64
}

// ParamError is an error of one parameter of a space.
type ParamError struct {
	Key string
	Err error
}

func (e *ParamError) Error() string { return e.Key + ": " + e.Err.Error() }

func (e *ParamError) Unwrap() error { return e.Err }

// Check validates the space: ranges that are not empty, log ranges above
// 0, integral integer bounds, choices without duplicates, conditions that
// name an earlier unconditional choice parameter and some of its values.
func (sp *Space) Check() error {
	if len(sp.Params) == 0 {
		return errors.New("the search space is empty")
	}
	seen := map[string]*Param{}
	for i := range sp.Params {
		p := &sp.Params[i]
		if seen[p.Key] != nil {
			return &ParamError{p.Key, errors.New("listed twice")}
		}
		if err := p.Check(); err != nil {
			return &ParamError{p.Key, err}
		}
		if p.When != nil {
			if err := p.When.check(seen); err != nil {
				return &ParamError{p.Key, fmt.Errorf("when: %w", err)}
			}
		}
		seen[p.Key] = p
	}
	return nil
}

// Check validates the parameter alone (not its condition): a range that
// is not empty, above 0 on a log scale, integral for Int; choices without
// duplicates.
func (p *Param) Check() error {
	switch p.Dist {
	case Uniform, Int:
		if math.IsNaN(p.Lo) || math.IsNaN(p.Hi) || math.IsInf(p.Lo, 0) || math.IsInf(p.Hi, 0) {
			return fmt.Errorf("%s range [%v, %v] is not finite", p.Dist, p.Lo, p.Hi)
		}
		if !(p.Lo < p.Hi) {
			return fmt.Errorf("empty %s range [%v, %v]: want low < high", p.Dist, p.Lo, p.Hi)
		}
		if p.Log && p.Lo <= 0 {
			return fmt.Errorf("log range [%v, %v] reaches 0 or below: a log scale needs low > 0", p.Lo, p.Hi)
		}
		if p.Dist == Int && (p.Lo != math.Trunc(p.Lo) || p.Hi != math.Trunc(p.Hi) || math.Abs(p.Lo) > 1<<52 || math.Abs(p.Hi) > 1<<52) {
			return fmt.Errorf("int range [%v, %v]: want integers below 2^52", p.Lo, p.Hi)
		}
	case Choice:
		if len(p.Choices) == 0 {
			return errors.New("empty choice")
		}
		for i, c := range p.Choices {
			switch c.(type) {
			case string, int64, float64, bool:
			default:
				return fmt.Errorf("choice %v: want a string, number or boolean", c)
			}
			if slices.Index(p.Choices, c) < i {
				return fmt.Errorf("choice %v listed twice", c)
			}
		}
	default:
		return fmt.Errorf("unknown distribution %d", p.Dist)
	}
	return nil
}

func (c *Condition) check(earlier map[string]*Param) error {
	parent := earlier[c.Key]
	switch {
	case parent == nil:
		return fmt.Errorf("names %q, which is not a parameter listed before it", c.Key)
	case parent.Dist != Choice:
		return fmt.Errorf("names %q, which is not a choice", c.Key)
	case parent.When != nil:
		return fmt.Errorf("names %q, which is itself conditional", c.Key)
	case len(c.Values) == 0:
		return errors.New("no values")
	}
	for _, v := range c.Values {
		if !slices.Contains(parent.Choices, v) {
			return fmt.Errorf("%v is not a choice of %s", v, c.Key)
		}
	}
	return nil
}

// Active reports whether p exists in a point whose earlier parameters are
// pt.
func (p *Param) Active(pt Point) bool {
	if p.When == nil {
		return true
	}
	v, ok := pt[p.When.Key]
	return ok && slices.Contains(p.When.Values, v)
}

// bounds is the parameter's range in its internal space (log when Log;
// an Int's range widened by half a step each side, so that every integer
// has the same share of it).
func (p *Param) bounds() (lo, hi float64) {
	lo, hi = p.Lo, p.Hi
	if p.Dist == Int {
		lo, hi = lo-0.5, hi+0.5
	}
	if p.Log {
		lo, hi = optim.Log(lo), optim.Log(hi)
	}
	return lo, hi
}

// internal is a numeric value of the parameter in its internal space.
func (p *Param) internal(v any) (float64, bool) {
	var x float64
	switch t := v.(type) {
	case float64:
		x = t
	case int64:
		x = float64(t)
	default:
		return 0, false
	}
	if p.Log {
		x = optim.Log(x)
	}
	return x, true
}

// external maps an internal value t back to the parameter's value.
func (p *Param) external(t float64) any {
	lo, hi := p.bounds()
	t = min(max(t, lo), hi)
	x := t
	if p.Log {
		x = optim.Exp(t)
	}
	if p.Dist == Int {
		return int64(min(max(math.Round(x), p.Lo), p.Hi))
	}
	return min(max(x, p.Lo), p.Hi)
}

// fromUnit maps u in [0, 1) to a value of the parameter: uniformly over
// its internal range, or the choice of index floor(u * len).
func (p *Param) fromUnit(u float64) any {
	if p.Dist == Choice {
		return p.Choices[min(int(u*float64(len(p.Choices))), len(p.Choices)-1)]
	}
	lo, hi := p.bounds()
	return p.external(lo + float64(u*(hi-lo)))
}

// choiceIndex is the index of v among the choices, or -1.
func (p *Param) choiceIndex(v any) int { return slices.Index(p.Choices, v) }

// String describes the parameter as the experiments file spells it.
func (p *Param) String() string {
	var b strings.Builder
	switch p.Dist {
	case Uniform, Int:
		name := "uniform"
		if p.Dist == Int {
			name = "int"
		} else if p.Log {
			name = "log_uniform"
		}
		fmt.Fprintf(&b, "%s [%v, %v]", name, p.Lo, p.Hi)
		if p.Dist == Int && p.Log {
			b.WriteString(" log")
		}
	case Choice:
		parts := make([]string, len(p.Choices))
		for i, c := range p.Choices {
			parts[i] = fmt.Sprint(c)
		}
		fmt.Fprintf(&b, "choice [%s]", strings.Join(parts, ", "))
	}
	if p.When != nil {
		parts := make([]string, len(p.When.Values))
		for i, c := range p.When.Values {
			parts[i] = fmt.Sprint(c)
		}
		fmt.Fprintf(&b, " when %s in [%s]", p.When.Key, strings.Join(parts, ", "))
	}
	return b.String()
}
