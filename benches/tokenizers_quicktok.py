"""libcupel's token counting against quicktok (C++ with a C ABI, PyPI
`quicktok-v1`, which ships its vocabularies), in one Python process, on the
same texts: single-threaded throughput on the corpus of tests/text/corpus
and the load time of each vocabulary (each load in a fresh process).

    cargo build --release
    python3 -m venv /tmp/qt && /tmp/qt/bin/pip install quicktok-v1
    /tmp/qt/bin/python benches/tokenizers_quicktok.py target/release/libcupel.so

libcupel is called through ctypes: one call per text, so the ~1 us a
ctypes call costs is in its figures and not in quicktok's (a C extension).
"""
import ctypes
import glob
import os
import statistics
import subprocess
import sys
import time

import quicktok

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/libcupel.so")
ROUNDS = 15

lib = ctypes.CDLL(LIB)
lib.cupel_tokenizer_new.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
lib.cupel_tokenizer_count.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                      ctypes.POINTER(ctypes.c_int64)]


def median_time(f):
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def load_time(which, name):
    """The first load of `name` in a fresh interpreter, in seconds."""
    code = {
        "libcupel": (
            "import ctypes,time; lib=ctypes.CDLL(%r); t=ctypes.c_void_p(); s=time.perf_counter(); "
            "st=lib.cupel_tokenizer_new(%r, ctypes.byref(t)); e=time.perf_counter(); assert st==0; print(e-s)"
        ) % (LIB, name.encode()),
        "quicktok": (
            "import time,quicktok; s=time.perf_counter(); quicktok.get_encoding(%r).count('x'); "
            "print(time.perf_counter()-s)"
        ) % name,
    }[which]
    runs = [float(subprocess.check_output([sys.executable, "-c", code]).decode()) for _ in range(5)]
    return statistics.median(runs)


def first_count(which, name, path):
    """MB/s of the first count of the file at `path` in a fresh interpreter
    (after loading the vocabulary and counting one word): no cache holds any
    piece of it yet."""
    code = {
        "libcupel": (
            "import ctypes,time; lib=ctypes.CDLL(%r); t=ctypes.c_void_p(); n=ctypes.c_int64(); "
            "lib.cupel_tokenizer_new(%r, ctypes.byref(t)); lib.cupel_tokenizer_count(t, b'x', 1, ctypes.byref(n)); "
            "d=open(%r,'rb').read(); s=time.perf_counter(); lib.cupel_tokenizer_count(t, d, len(d), ctypes.byref(n)); "
            "print(len(d)/(time.perf_counter()-s)/1e6)"
        ) % (LIB, name.encode(), path),
        "quicktok": (
            "import time,quicktok; e=quicktok.get_encoding(%r); e.count('x'); d=open(%r,encoding='utf-8').read(); "
            "b=len(d.encode()); s=time.perf_counter(); e.count(d); print(b/(time.perf_counter()-s)/1e6)"
        ) % (name, path),
    }[which]
    runs = [float(subprocess.check_output([sys.executable, "-c", code]).decode()) for _ in range(5)]
    return statistics.median(runs)


def main():
    files = sorted(p for p in glob.glob(os.path.join(ROOT, "tests/text/corpus/*")) if not p.endswith(".md"))
    texts = [(os.path.basename(p), open(p, encoding="utf-8").read()) for p in files]
    texts.insert(0, ("mixed (all files)", "\n".join(t for _, t in texts)))
    print("| vocabulary | libcupel first load | quicktok first load |")
    print("|---|---|---|")
    for name in ("o200k_base", "cl100k_base"):
        print("| %s | %.1f ms | %.1f ms |" % (name, load_time("libcupel", name) * 1e3,
                                              load_time("quicktok", name) * 1e3))
    mixed_path = "/tmp/cupel-bench-mixed.txt"
    with open(mixed_path, "w", encoding="utf-8") as f:
        f.write(texts[0][1])
    print("\nThe first count of the mixed corpus in a fresh process (no piece cached yet), MB/s")
    print("| vocabulary | libcupel | quicktok | quicktok time / libcupel time |")
    print("|---|---|---|---|")
    for name in ("o200k_base", "cl100k_base"):
        a, b = first_count("libcupel", name, mixed_path), first_count("quicktok", name, mixed_path)
        print("| %s | %.1f | %.1f | %.2fx |" % (name, a, b, a / b))
    for name in ("o200k_base", "cl100k_base"):
        tok = ctypes.c_void_p()
        assert lib.cupel_tokenizer_new(name.encode(), ctypes.byref(tok)) == 0
        qt = quicktok.get_encoding(name)
        out = ctypes.c_int64()
        print("\n%s: single-threaded counting, the same text again and again (both tokenizers' caches warm), MB/s (median of %d); quicktok time / libcupel time" % (name, ROUNDS))
        print("| text | bytes | libcupel | quicktok | quicktok / libcupel |")
        print("|---|---|---|---|---|")
        for label, text in texts:
            data = text.encode("utf-8")
            assert lib.cupel_tokenizer_count(tok, data, len(data), ctypes.byref(out)) == 0
            theirs = qt.count(text)
            if out.value != theirs:
                print("  (counts differ on %s: libcupel %d, quicktok %d)" % (label, out.value, theirs))
            a = median_time(lambda: lib.cupel_tokenizer_count(tok, data, len(data), ctypes.byref(out)))
            b = median_time(lambda: qt.count(text))
            print("| %s | %d | %.1f | %.1f | %.2fx |" % (label, len(data), len(data) / a / 1e6,
                                                        len(data) / b / 1e6, b / a))


if __name__ == "__main__":
    main()
