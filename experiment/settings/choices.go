package settings

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
)

// Choices is a registry of choice settings: for a key (an interface field
// tagged set:"optimizer"), the structs that hold the settings of each name
// it may take. Registered is the one the program uses; a test may make its
// own (NewChoices) to register in an order of its choosing.
//
// A registry resolves lazily: registering only records the struct type, and
// a struct that declares a choice field reads the registry when its specs
// are asked for (SpecsOf, Decode, Keys), after every init has run. The
// first read freezes it: a registration after that panics, so a choice
// registered too late is an error at start-up, never a setting silently
// rejected. Which file registers first never changes what is registered.
type Choices struct {
	mu     sync.RWMutex
	frozen bool
	names  map[string][]string                // key -> names in registration order
	types  map[string]map[string]reflect.Type // key -> name -> struct type
}

// NewChoices returns an empty registry.
func NewChoices() *Choices {
	return &Choices{names: map[string][]string{}, types: map[string]map[string]reflect.Type{}}
}

// Registered holds the choices registered with RegisterChoice: those of the
// base optimizers and symmetry steps (train) and of the pipelines.
var Registered = NewChoices()

// RegisterChoice registers v's struct type as the settings of value name of
// the choice setting key (for example key "optimizer", name "adam", v
// AdamSettings{}) in Registered. An interface field tagged set:"key" then
// accepts name. Call it from an init function.
func RegisterChoice(key, name string, v any) { Registered.Register(key, name, v) }

// ChoiceNames returns the names registered for a choice key in Registered,
// in registration order.
func ChoiceNames(key string) []string { return Registered.Names(key) }

// ChoiceName returns the name a decoded choice value was registered under
// in Registered (for the GaugeSettings value GoldstoneSettings{...},
// "goldstone"). It panics when v's type is not registered: that is a
// programming error.
func ChoiceName(v any) string { return Registered.NameOf(v) }

// Register registers v's struct type as the settings of value name of the
// choice setting key. It panics on a duplicate, on a type registered
// already (a type is the settings of one choice), and once the registry
// has been read.
func (c *Choices) Register(key, name string, v any) {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("settings: RegisterChoice(%q, %q): %v is not a struct", key, name, t))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frozen {
		panic(fmt.Sprintf("settings: RegisterChoice(%q, %q) after the choices were read: register choices from init functions", key, name))
	}
	if _, dup := c.types[key][name]; dup {
		panic(fmt.Sprintf("settings: choice %s = %q registered twice", key, name))
	}
	for k, byName := range c.types {
		for n, ct := range byName {
			if ct == t {
				panic(fmt.Sprintf("settings: RegisterChoice(%q, %q): %v is already the settings of %s = %q", key, name, t, k, n))
			}
		}
	}
	if c.types[key] == nil {
		c.types[key] = map[string]reflect.Type{}
	}
	c.types[key][name] = t
	c.names[key] = append(c.names[key], name)
}

// read takes the read lock, freezing the registry on its first read.
func (c *Choices) read() func() {
	c.mu.RLock()
	if c.frozen {
		return c.mu.RUnlock
	}
	c.mu.RUnlock()
	c.mu.Lock()
	c.frozen = true
	return c.mu.Unlock
}

// Names returns the names registered for a choice key, in registration
// order.
func (c *Choices) Names(key string) []string {
	defer c.read()()
	return slices.Clone(c.names[key])
}

func (c *Choices) typeOf(key, name string) (reflect.Type, bool) {
	defer c.read()()
	t, ok := c.types[key][name]
	return t, ok
}

// NameOf returns the name v's type is registered under (see ChoiceName).
func (c *Choices) NameOf(v any) string {
	t := reflect.TypeOf(v)
	defer c.read()()
	for _, byName := range c.types {
		for n, ct := range byName {
			if ct == t {
				return n
			}
		}
	}
	panic(fmt.Sprintf("settings: %v is not registered for a choice", t))
}

// nameOf returns the name t is registered under for key.
func (c *Choices) nameOf(key string, t reflect.Type) string {
	defer c.read()()
	for n, ct := range c.types[key] {
		if ct == t {
			return n
		}
	}
	panic(fmt.Sprintf("settings: %v is not registered for choice %s", t, key))
}
