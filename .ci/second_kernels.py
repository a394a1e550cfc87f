"""Run a command through a second set of float64 kernels: python .ci/second_kernels.py CMD ARGS...

A float64 reduction's last bits depend on the order its kernel sums in, and that order differs
between CPUs: OpenBLAS (DYNAMIC_ARCH) picks its SkylakeX kernels on an AVX-512 machine and its
Haswell or Zen ones elsewhere, numpy dispatches its loops on the CPU's features, torch and numba
compile for the host. A test that passes on one machine only because of such an accident fails on
the next one CI runs on. So CI reruns the tests here with every one of those choices moved away from
this machine's own:

- numpy: ``NPY_DISABLE_CPU_FEATURES`` names every dispatch target this CPU has beyond numpy's
  baseline, so every loop runs its baseline version;
- OpenBLAS: ``OPENBLAS_CORETYPE`` names a core other than the one it picks here (Haswell on an
  AVX-512 machine, Sandybridge on an AVX2 one, Prescott otherwise);
- torch: ``ATEN_CPU_CAPABILITY=default`` (no AVX2/AVX-512 kernels), ``MKL_ENABLE_INSTRUCTIONS=SSE4_2``;
- numba: ``NUMBA_CPU_NAME=generic`` (code for a generic x86-64, not this host).

It prints what it chose and what the child process then reports, so a log says which kernels ran.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

# OpenBLAS's x86-64 cores (threadpoolctl's "architecture"), by the instructions their kernels use,
# and the core one step down that every CPU of the group can run.
STEP_DOWN = [
    ({"skylakex", "cooperlake", "sapphirerapids"}, "Haswell"),  # AVX-512 -> AVX2 + FMA
    ({"haswell", "zen", "excavator"}, "Sandybridge"),  # AVX2 -> AVX
    ({"sandybridge", "bulldozer", "piledriver", "steamroller"}, "Nehalem"),  # AVX -> SSE4.2
]

PROBE = """
import json, numpy, threadpoolctl
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
found = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
cores = sorted({i.get("architecture") or "?" for i in threadpoolctl.threadpool_info()
                if i.get("internal_api") == "openblas"})
print(json.dumps({"numpy_dispatch": found, "openblas_cores": cores}))
"""


def probe(env: dict[str, str]) -> dict[str, list[str]]:
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def other_core(cores: list[str]) -> str:
    here = {core.lower() for core in cores}
    for group, lower in STEP_DOWN:
        if here & group:
            return lower
    return "Prescott"  # the generic SSE3 kernels (OpenBLAS reports them as Katmai)


def narrowed_environment() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES", "OPENBLAS_CORETYPE"):
        env.pop(name, None)
    native = probe(env)
    if platform.machine().lower() not in ("x86_64", "amd64"):
        raise SystemExit(f"second_kernels: written for x86-64, this machine is {platform.machine()}")
    if native["numpy_dispatch"]:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(native["numpy_dispatch"])
    env["OPENBLAS_CORETYPE"] = other_core(native["openblas_cores"])
    env["ATEN_CPU_CAPABILITY"] = "default"
    env["MKL_ENABLE_INSTRUCTIONS"] = "SSE4_2"
    env["NUMBA_CPU_NAME"] = "generic"
    narrowed = probe(env)
    print(f"second_kernels: native {json.dumps(native)}", flush=True)
    print(f"second_kernels: narrowed {json.dumps(narrowed)} with "
          + " ".join(f"{k}={env[k]!r}" for k in ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE",
                                                 "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS",
                                                 "NUMBA_CPU_NAME") if k in env), flush=True)
    if narrowed["numpy_dispatch"]:
        raise SystemExit(f"second_kernels: numpy still dispatches {narrowed['numpy_dispatch']}")
    if not native["numpy_dispatch"] and narrowed["openblas_cores"] == native["openblas_cores"]:
        raise SystemExit("second_kernels: neither numpy's nor OpenBLAS's kernels changed; the rerun would "
                         "test nothing new")
    return env


def main(argv: list[str]) -> int:
    if not argv:
        raise SystemExit(__doc__)
    return subprocess.call(argv, env=narrowed_environment())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
