# shellcheck shell=bash
# Open MPI on this one machine, for the tests and benchmarks that start mpirun (sourced; see
# reference/real-components.md §2): as root mpirun needs both ALLOW variables, more ranks than
# cores need oversubscription, ranks talk over shared memory and mpirun's own TCP channel stays
# on loopback. OMPI_TEST_ENV holds them as NAME=VALUE words, for `export`, `env` and chroots.
OMPI_TEST_ENV=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_tcp_if_include=lo
  OMPI_MCA_oob_tcp_if_include=lo)
