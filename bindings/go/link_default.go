//go:build !cupel_pkgconfig

package cupel

// Links the library built by `cargo build --release` in this checkout.
// Build with `-tags cupel_pkgconfig` to use an installed libcupel instead.

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #cgo LDFLAGS: -L${SRCDIR}/../../target/release -lcupel -Wl,-rpath,${SRCDIR}/../../target/release
import "C"
