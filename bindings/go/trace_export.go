package cupel

// The Go function the C trampoline of trace.go calls. A file with an
// //export may declare, never define, in its preamble (cgo copies the
// preamble into two C files), so the trampoline lives in trace.go.

/*
#include <stdint.h>
#include "cupel.h"
*/
import "C"

//export cupelGoTrace
func cupelGoTrace(state, run C.uintptr_t, event *C.cupel_trace_event) {
	deliverTrace(uintptr(state), uintptr(run), event)
}
