# A Spack package for jostle-bench (the C/MPI half of jostle), kept in jostle's repository:
#   spack repo add packaging/spack && spack install jostle +openblas ^openmpi
# The Python half is installed with pip (pip install ./python); it finds jostle-bench on PATH
# (spack load jostle) or through $JOSTLE_BENCH.  Checked by tests/py/test_install.py.

from spack.package import *


class Jostle(CMakePackage):
    """Benchmarks of the interference between computation and communication on HPC nodes:
    memory contention, NIC locality (NUIOA), overlap of non-blocking collectives, dynamic
    broadcasts; MPI ranks whose threads and buffers are bound through hwloc."""

    homepage = "https://github.com/jostle-hpc/jostle"
    git = "https://github.com/jostle-hpc/jostle.git"

    maintainers("jostle-hpc")
    license("BSD-3-Clause")

    version("main", branch="main")
    version("0.1.0", tag="v0.1.0")

    variant("openblas", default=True,
            description="OpenBLAS and LAPACKE for the gemm kernel and the Cholesky tiles")
    variant("simgrid", default=False,
            description="SimGrid at run time, for the simulated broadcasts and Cholesky (smpirun)")
    variant("starpu", default=False,
            description="StarPU-MPI's mpi_cholesky at run time, the Cholesky's reference")

    depends_on("c", type="build")
    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mpi")
    depends_on("hwloc@2:")
    depends_on("openblas", when="+openblas")   # its LAPACKE inside serves the Cholesky tiles
    depends_on("simgrid+smpi", type="run", when="+simgrid")
    depends_on("starpu+mpi", type="run", when="+starpu")

    def cmake_args(self):
        # jostle's CMake finds MPI through the compiler wrapper and hwloc through pkg-config.
        return [
            self.define("MPI_C_COMPILER", self.spec["mpi"].mpicc),
            self.define_from_variant("JOSTLE_OPENBLAS", "openblas"),
            self.define("BUILD_TESTING", False),
        ]
