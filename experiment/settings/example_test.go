package settings_test

import (
	"fmt"

	"goldstone/experiment/settings"
)

// shape is a choice: the struct registered for the name the setting takes
// holds that name's own settings.
type shape interface{ area() float64 }

type circle struct {
	Radius float64 `set:"radius" default:"1" check:">0" doc:"circle: radius"`
}

type square struct {
	Side float64 `set:"side" default:"1" check:">0" doc:"square: side"`
}

func (c circle) area() float64 { return 3 * c.Radius * c.Radius }
func (s square) area() float64 { return s.Side * s.Side }

// drawing is a stage's settings struct: its tags declare the settings.
type drawing struct {
	settings.Seeded
	Shape shape `set:"shape" default:"circle" doc:"the shape"`
	Lines int   `set:"lines" default:"2" check:">=0" doc:"lines to draw"`
}

// A settings struct gives the specs the config decoder checks values
// against, decodes the resolved values, and keys a stage's cache with
// exactly what it read: the options of the shape not chosen are absent.
func Example() {
	c := settings.NewChoices() // a program registers into settings.Registered, from init
	c.Register("shape", "circle", circle{})
	c.Register("shape", "square", square{})
	for _, sp := range c.SpecsOf(drawing{}) {
		fmt.Println(sp.Key, sp.Kind, settings.FormatValue(sp.Default))
	}
	var d drawing
	err := c.Decode(settings.Values{"seed": int64(7), "shape": "square", "side": 2.0, "radius": 1.0, "lines": int64(3)}, &d)
	fmt.Println(err, d.Seed, d.Shape.area(), d.Lines)
	fmt.Println(string(settings.Encode(c.Keys(d))))
	// Output:
	// seed integer 1
	// shape string circle
	// radius float 1
	// side float 1
	// lines integer 2
	// <nil> 7 4 3
	// {"lines":3,"seed":7,"shape":"square","side":2}
}
