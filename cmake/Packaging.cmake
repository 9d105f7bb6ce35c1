# What `cmake --install` puts where, the man pages and shell completion generated from the
# command definitions, and the Debian package (CPack DEB). docs/install.md.
#
# Components: `cli` (CLI, MPI bench helper, man pages, completion, docs) and `system` (systemd
# units, the Slurm wrapper, /etc files), packaged together as gpufleet; and `cuda` (the package gpufleet-cuda:
# gpufleet-bench-cuda, built where the CUDA toolkit with NCCL is found; its CUDA, cuBLAS and NCCL
# come from NVIDIA's repositories, so it declares no dependency on them).

set(GPUFLEET_GEN ${PROJECT_BINARY_DIR}/generated)
set(CPACK_PACKAGE_CONTACT "gpufleet developers <dev@gpufleet.invalid>")
# The man pages' date: SOURCE_DATE_EPOCH when set (reproducible builds), else today.
string(TIMESTAMP GPUFLEET_DATE "%Y-%m-%d" UTC)
add_custom_command(
  OUTPUT ${GPUFLEET_GEN}/man/gpufleet.1.gz ${GPUFLEET_GEN}/completion/gpufleet
         ${GPUFLEET_GEN}/completion/_gpufleet
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${GPUFLEET_GEN}/man
  COMMAND ${CMAKE_COMMAND} -E make_directory ${GPUFLEET_GEN}/man ${GPUFLEET_GEN}/completion
  COMMAND gpufleet man-pages ${GPUFLEET_GEN}/man --date ${GPUFLEET_DATE}
  COMMAND gpufleet completion bash > ${GPUFLEET_GEN}/completion/gpufleet
  COMMAND gpufleet completion zsh > ${GPUFLEET_GEN}/completion/_gpufleet
  DEPENDS gpufleet
  COMMENT "Man pages and shell completion from gpufleet's command definitions")
add_custom_target(gpufleet-docs ALL DEPENDS ${GPUFLEET_GEN}/man/gpufleet.1.gz)

# A spec for /etc/gpufleet/cluster.yaml: the reference cluster, headed by what to do with it.
file(READ ${PROJECT_SOURCE_DIR}/examples/reference-32gpu.yaml GPUFLEET_REFERENCE_SPEC)
file(WRITE ${GPUFLEET_GEN}/cluster.yaml
  "# /etc/gpufleet/cluster.yaml: this node's cluster spec, read by `gpufleet check`, the agent\n"
  "# (gpufleet-agent.service) and the Slurm health check. EDIT IT to describe your cluster: as\n"
  "# installed it is gpufleet's reference cluster (4 nodes of 8 A100), whose checks fail on any\n"
  "# other hardware. Field reference: man gpufleet-plan, /usr/share/doc/gpufleet/spec.md;\n"
  "# more examples: /usr/share/doc/gpufleet/examples/. dpkg keeps your edits on upgrade.\n"
  "#\n${GPUFLEET_REFERENCE_SPEC}")

# The Debian changelog a native package carries (lintian), gzip -9n.
string(TIMESTAMP GPUFLEET_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE ${GPUFLEET_GEN}/changelog
  "gpufleet (${PROJECT_VERSION}) unstable; urgency=medium\n\n"
  "  * Built from the gpufleet repository; its history is the project's git log.\n\n"
  " -- ${CPACK_PACKAGE_CONTACT}  ${GPUFLEET_CHANGELOG_DATE}\n")
add_custom_command(OUTPUT ${GPUFLEET_GEN}/changelog.gz
  COMMAND gzip -9nc ${GPUFLEET_GEN}/changelog > ${GPUFLEET_GEN}/changelog.gz
  DEPENDS ${GPUFLEET_GEN}/changelog)
add_custom_target(gpufleet-changelog ALL DEPENDS ${GPUFLEET_GEN}/changelog.gz)
# The Slurm wrapper's page (hand-written: it is a script) and gpufleet-bench-cuda's, which is
# gpufleet-bench's.
add_custom_command(OUTPUT ${GPUFLEET_GEN}/gpufleet-healthcheck.8.gz
  COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/packaging/slurm/gpufleet-healthcheck.8
          > ${GPUFLEET_GEN}/gpufleet-healthcheck.8.gz
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/slurm/gpufleet-healthcheck.8)
file(WRITE ${GPUFLEET_GEN}/gpufleet-bench-cuda.1 ".so man1/gpufleet-bench.1\n")
add_custom_command(OUTPUT ${GPUFLEET_GEN}/gpufleet-bench-cuda.1.gz
  COMMAND gzip -9nc ${GPUFLEET_GEN}/gpufleet-bench-cuda.1 > ${GPUFLEET_GEN}/gpufleet-bench-cuda.1.gz
  DEPENDS ${GPUFLEET_GEN}/gpufleet-bench-cuda.1)
add_custom_target(gpufleet-extra-man ALL
  DEPENDS ${GPUFLEET_GEN}/gpufleet-healthcheck.8.gz ${GPUFLEET_GEN}/gpufleet-bench-cuda.1.gz)

install(DIRECTORY ${GPUFLEET_GEN}/man/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT cli)
install(FILES ${GPUFLEET_GEN}/completion/gpufleet
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT cli)
install(FILES ${GPUFLEET_GEN}/completion/_gpufleet
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions COMPONENT cli)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT cli)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT cli
        PATTERN "images" EXCLUDE)
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT cli)

# The Debian package's system files, in component `system`: absolute paths, so EXCLUDE_FROM_ALL
# keeps them out of a plain `cmake --install` into a prefix (and out of the bundle); only the
# package asks for them.
install(FILES packaging/systemd/gpufleet-agent.service packaging/systemd/gpufleet-check.service
              packaging/systemd/gpufleet-check.timer
        DESTINATION /lib/systemd/system COMPONENT system EXCLUDE_FROM_ALL)
install(FILES ${GPUFLEET_GEN}/cluster.yaml DESTINATION /etc/gpufleet
        COMPONENT system EXCLUDE_FROM_ALL)
install(FILES packaging/default-gpufleet DESTINATION /etc/default RENAME gpufleet
        COMPONENT system EXCLUDE_FROM_ALL)
install(PROGRAMS packaging/slurm/gpufleet-healthcheck DESTINATION ${CMAKE_INSTALL_SBINDIR}
        COMPONENT system EXCLUDE_FROM_ALL)
install(FILES ${GPUFLEET_GEN}/gpufleet-healthcheck.8.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man8
        COMPONENT system EXCLUDE_FROM_ALL)
install(FILES packaging/deb/copyright ${GPUFLEET_GEN}/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT system EXCLUDE_FROM_ALL)
if(GPUFLEET_CUDA_FOUND)
  install(FILES packaging/deb/copyright ${GPUFLEET_GEN}/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/gpufleet-cuda COMPONENT cuda EXCLUDE_FROM_ALL)
  install(FILES ${GPUFLEET_GEN}/gpufleet-bench-cuda.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
          COMPONENT cuda)
endif()

set(CPACK_PACKAGE_NAME gpufleet)
set(CPACK_PACKAGE_VENDOR "gpufleet developers")
set(CPACK_PACKAGE_CONTACT "gpufleet developers <dev@gpufleet.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "plan, bring up, validate, run, watch and survive a GPU cluster")
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL cli system)
if(GPUFLEET_CUDA_FOUND)
  list(APPEND CPACK_COMPONENTS_ALL cuda)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://gpufleet.invalid/")
set(CPACK_DEBIAN_MAIN_PACKAGE_NAME gpufleet)
# Depends and Recommends (Open MPI, for the MPI plugin) from dpkg-shlibdeps in
# cmake/CPackProjectConfig.cmake.in.
set(CPACK_DEBIAN_MAIN_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_MAIN_PACKAGE_SUGGESTS "slurm-client, prometheus")
set(CPACK_DEBIAN_MAIN_DESCRIPTION
"gpufleet carries a GPU cluster for deep learning through its life from one
spec: it plans memory, step time, network, storage, power and cost; writes the
node's NCCL topology file; validates collectives, links, storage and GPUs
against what the hardware should do; emits Slurm, torchrun, Volcano and
Prometheus configs; and serves node metrics with health checks that drain bad
nodes (gpufleet-agent.service, gpufleet-check.timer, and a Slurm
HealthCheckProgram). No service is enabled on installation.")
set(CPACK_DEBIAN_MAIN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/deb/conffiles ${PROJECT_SOURCE_DIR}/packaging/deb/postinst
    ${PROJECT_SOURCE_DIR}/packaging/deb/prerm ${PROJECT_SOURCE_DIR}/packaging/deb/postrm)
set(CPACK_DEBIAN_MAIN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_CUDA_PACKAGE_NAME gpufleet-cuda)
set(CPACK_DEBIAN_CUDA_PACKAGE_SHLIBDEPS OFF)
configure_file(cmake/CPackProjectConfig.cmake.in ${PROJECT_BINARY_DIR}/CPackProjectConfig.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/CPackProjectConfig.cmake)
set(CPACK_DEBIAN_CUDA_DESCRIPTION
"gpufleet-bench-cuda runs `gpufleet bench gpu` and `gpufleet bench collective
--backend nccl`. It needs the CUDA ${CUDAToolkit_VERSION_MAJOR} runtime, cuBLAS and NCCL 2
from NVIDIA's repositories, which this package does not declare: gpufleet
checks that they load and names the one missing (exit 3).")
include(CPack)
# Package `gpufleet` is the group `main` (components cli and system); `gpufleet-cuda` is the
# component cuda on its own.
cpack_add_component_group(main)
cpack_add_component(cli GROUP main)
cpack_add_component(system GROUP main)
cpack_add_component(cuda)
