// Package fused holds the patterns the fmacheck test must catch (and the
// rounded forms it must let through). It lives under testdata so that
// goldstone/... never builds it.
package fused

import (
	"math"
	"math/rand/v2"
)

// Fused is contracted into one FMA under GOAMD64=v3 and on arm64.
func Fused(x, y, z float64) float64 { return x*y + z }

// Rounded is never contracted: the conversion rounds the product.
func Rounded(x, y, z float64) float64 { return float64(x*y) + z }

// Explicit is an intentional fused multiply-add.
func Explicit(x, y, z float64) float64 { return math.FMA(x, y, z) }

// Exp calls math.Exp, whose bits depend on the build.
func Exp(x float64) float64 { return math.Exp(x) }

// Normal calls NormFloat64, which calls math.Exp and math.Log.
func Normal(r *rand.Rand) float64 { return r.NormFloat64() }

// Sqrt is correctly rounded everywhere.
func Sqrt(x float64) float64 { return math.Sqrt(x) }
