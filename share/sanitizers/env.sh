# The sanitizers' run-time settings for build/asan and build/tsan.  scripts/test-sanitize.sh
# sources it; source it yourself to run a sanitized jostle-bench by hand:
#   . share/sanitizers/env.sh && mpiexec.mpich -n 2 build/tsan/jostle-bench ...
# Every rank inherits these through mpirun/mpiexec.
_jt_san=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)

# ASan: stop at the first error.  fast_unwind_on_malloc=0 walks the stacks of the MPI libraries
# (built without frame pointers) so that lsan.supp can match their frames.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:fast_unwind_on_malloc=0:strict_string_checks=1:detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=$_jt_san/lsan.supp:print_suppressions=0"
# UBSan: -fno-sanitize-recover=all already makes every finding fatal; a stack says where.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# TSan: report every race of the run, then exit 66 (its default) so the run fails.
export TSAN_OPTIONS="suppressions=$_jt_san/tsan.supp:second_deadlock_stack=1:history_size=4"
# MPICH's UCX patches mmap/munmap for its memory-event hooks; under TSan that crashes the
# process at thread exit.  Nothing here registers memory, so the hooks are not needed.
export UCX_MEM_EVENTS=no
unset _jt_san
