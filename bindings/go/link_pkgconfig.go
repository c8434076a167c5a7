//go:build cupel_pkgconfig

package cupel

// Links an installed libcupel (e.g. by `cargo cinstall`) found by pkg-config.

// #cgo pkg-config: cupel
import "C"
