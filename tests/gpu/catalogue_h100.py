# SPDX-License-Identifier: Apache-2.0
"""The catalogue on a GPU machine: every catalogue library in a venv's nvidia/ tree found and loaded
(with its dependencies) by libcudaload, compared with cuda.pathfinder's choice in the same venv,
reused when torch loaded it first (one copy in /proc/self/maps), and load times against
pathfinder in fresh processes.

    python tests/gpu/catalogue_h100.py BUILD_DIR OUT_DIR      (the venv's python, e.g. /opt/torch/.venv)

BUILD_DIR holds libcudaload.so.0 (make all); times are medians of 3 fresh processes. Writes OUT_DIR/catalogue.json and prints a summary.
"""
import ctypes, json, os, statistics, subprocess, sys, time

BUILD, OUT = sys.argv[1], sys.argv[2]
LIB = os.path.join(BUILD, "libcudaload.so.0")


class Info(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("lib", ctypes.c_int), ("name", ctypes.c_char_p), ("status", ctypes.c_int),
                ("loaded", ctypes.c_int), ("path", ctypes.c_char_p), ("soname", ctypes.c_char_p), ("source", ctypes.c_int),
                ("already_loaded", ctypes.c_int), ("major", ctypes.c_int), ("version", ctypes.c_int),
                ("driver_branch", ctypes.c_char_p), ("n_candidates", ctypes.c_size_t), ("candidates", ctypes.c_void_p),
                ("details", ctypes.c_void_p), ("env_name", ctypes.c_char_p)]


def cudaload():
    cl = ctypes.CDLL(LIB)
    cl.cudaload_library.argtypes = [ctypes.c_char_p, ctypes.POINTER(Info)]
    cl.cudaload_source_name.restype = ctypes.c_char_p
    cl.cudaload_status_name.restype = ctypes.c_char_p
    cl.cudaload_last_error.restype = ctypes.c_char_p
    return cl


def load(cl, name):
    info = Info(size=ctypes.sizeof(Info))
    st = cl.cudaload_library(name.encode(), ctypes.byref(info))
    return {"status": cl.cudaload_status_name(st).decode(), "path": info.path.decode() if info.path else None,
            "source": cl.cudaload_source_name(info.source).decode(), "major": info.major, "version": info.version,
            "error": cl.cudaload_last_error().decode() if st else ""}


def maps_count(prefix):
    seen = set()
    for line in open("/proc/self/maps"):
        p = line.split()[-1] if "/" in line else ""
        if os.path.basename(p).startswith(prefix):
            seen.add(p)
    return len(seen)


# the libraries of the catalogue that pathfinder also knows, with the file prefix to count in maps
NAMES = ["cudart", "cublasLt", "cublas", "cufft", "curand", "cusolver", "cusparse", "nvJitLink", "nvrtc", "cupti",
         "cufile", "cudnn", "nccl", "nvshmem_host", "cusparseLt", "nvvm", "nvfatbin", "npps", "nvjpeg", "cutensor"]

mode = os.environ.get("CATALOGUE_MODE", "main")
if mode == "one-cudaload":  # a fresh process: init + load one library, timed inside the process
    name = sys.argv[3]
    t0 = time.perf_counter()
    cl = cudaload()
    cl.cudaload_init(None)  # the driver and cudart
    t1 = time.perf_counter()
    r = load(cl, name)      # the library, with its dependencies
    t2 = time.perf_counter()
    print(json.dumps({"ms": (t2 - t0) * 1e3, "init_ms": (t1 - t0) * 1e3, "lib_ms": (t2 - t1) * 1e3, **r}))
    sys.exit(0)
if mode == "one-pathfinder":
    name = sys.argv[3]
    from cuda.pathfinder import load_nvidia_dynamic_lib
    t0 = time.perf_counter()
    try:
        l = load_nvidia_dynamic_lib(name)
        print(json.dumps({"ms": (time.perf_counter() - t0) * 1e3, "path": os.path.realpath(l.abs_path)}))
    except Exception as e:
        print(json.dumps({"ms": None, "path": None, "error": repr(e)[:300]}))
    sys.exit(0)

env = dict(os.environ, VIRTUAL_ENV=sys.prefix)
res = {"libraries": {}, "reuse": {}, "times": {}}


def fresh(m, name):
    out = subprocess.run([sys.executable, __file__, BUILD, OUT, name], env=dict(env, CATALOGUE_MODE=m),
                         capture_output=True, text=True, timeout=120)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except Exception:
        return {"error": (out.stdout + out.stderr)[-500:]}


for name in NAMES:
    ours, theirs = fresh("one-cudaload", name), fresh("one-pathfinder", name)
    ours_path = os.path.realpath(ours["path"]) if ours.get("path") else None
    res["libraries"][name] = {"cudaload": ours, "pathfinder": theirs,
                              "same_file": ours_path is not None and ours_path == theirs.get("path")}
    runs = [fresh("one-cudaload", name) for _ in range(5)]
    t_pf = [fresh("one-pathfinder", name).get("ms") for _ in range(5)]
    med = lambda k: statistics.median([x[k] for x in runs if x.get(k) is not None]) if any(x.get(k) is not None for x in runs) else None
    t_pf = [t for t in t_pf if t is not None]
    res["times"][name] = {"cudaload_ms": med("ms"), "cudaload_init_ms": med("init_ms"), "cudaload_lib_ms": med("lib_ms"),
                          "pathfinder_ms": statistics.median(t_pf) if t_pf else None}

# reuse: torch loads its libraries first, then libcudaload must take the same copies
import torch
torch.zeros(1, device="cuda")
x = torch.randn(64, 64, device="cuda")
torch.fft.fft(x)
torch.linalg.svd(x)
torch.nn.functional.conv2d(torch.randn(1, 1, 8, 8, device="cuda"), torch.randn(1, 1, 3, 3, device="cuda"))
torch.randn(8, device="cuda").normal_()
torch.cuda.synchronize()
cl = cudaload()
os.environ["VIRTUAL_ENV"] = sys.prefix
cl.cudaload_init(None)
for name, prefix in [("cudart", "libcudart.so"), ("cublas", "libcublas.so"), ("cublasLt", "libcublasLt.so"),
                     ("cufft", "libcufft.so"), ("cusolver", "libcusolver.so"), ("cudnn", "libcudnn.so"),
                     ("curand", "libcurand.so"), ("cusparse", "libcusparse.so"), ("nvJitLink", "libnvJitLink.so")]:
    before = maps_count(prefix)
    r = load(cl, name)
    res["reuse"][name] = {**r, "maps_before": before, "maps_after": maps_count(prefix)}

os.makedirs(OUT, exist_ok=True)
json.dump(res, open(os.path.join(OUT, "catalogue.json"), "w"), indent=1)
f = lambda v: "%.2f" % v if v is not None else "-"
print("medians of 5 fresh processes; ours = cudaload_init (driver + cudart) + cudaload_library(name), "
      "pathfinder = load_nvidia_dynamic_lib(name) (import excluded)")
print("%-13s %-8s %-9s %-5s %9s %9s %9s %9s" % ("library", "status", "source", "same", "ours", "init", "library", "pathf"))
for name in NAMES:
    l, t = res["libraries"][name], res["times"][name]
    print("%-13s %-8s %-9s %-5s %9s %9s %9s %9s" % (name, l["cudaload"].get("status", "?")[9:], l["cudaload"].get("source", ""),
          l["same_file"], f(t["cudaload_ms"]), f(t["cudaload_init_ms"]), f(t["cudaload_lib_ms"]), f(t["pathfinder_ms"])))
    if not l["same_file"]:
        print("   ours:", l["cudaload"].get("path"), l["cudaload"].get("error", "")[:300].replace("\n", " | "))
        print("   pathfinder:", l["pathfinder"].get("path"), l["pathfinder"].get("error", ""))
print("reuse after torch:")
for name, r in res["reuse"].items():
    print("  %-10s %-22s %-7s maps %d -> %d  %s" % (name, r["status"], r["source"], r["maps_before"], r["maps_after"], r["path"]))
