# install() rules in the layout of cmake/install_layout.cmake, and the Debian package:
#   cmake --build --preset dev && cpack --config build/dev/CPackConfig.cmake -B DIR
# gives DIR/torchdock_<version>_<arch>.deb (binary, probes, data, example manifests, man page,
# completions). Its Depends are computed by dpkg-shlibdeps (package dpkg-dev), so apt pulls
# libcurl and the rest on a bare Debian.
install(TARGETS torchdock RUNTIME DESTINATION ${TORCHDOCK_BIN_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/ DESTINATION ${TORCHDOCK_SHARE_DIR}/data
        PATTERN ".torchdock-kb.lock" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/manifests/ DESTINATION ${TORCHDOCK_SHARE_DIR}/manifests)
if(TARGET probe_options)
  # The host's probes only: the linux-arm64 set (the emulated tier's) is aarch64 code, which
  # this package's dpkg-shlibdeps and strip cannot read; an installed torchdock reads arm64
  # images in the files-only tier, which says so.
  install(DIRECTORY ${PROBES_OUTPUT_DIR}/ DESTINATION ${TORCHDOCK_PROBES_DIR} USE_SOURCE_PERMISSIONS
          PATTERN "__pycache__" EXCLUDE PATTERN "linux-arm64" EXCLUDE)
else()
  # A torchdock without probes cannot validate anything: refuse to install one.
  install(CODE "message(FATAL_ERROR \"torchdock: the probes were not built (no CUDA headers at configure time); \"
                \"an install without them could not validate images. Install the CUDA toolkit headers and reconfigure.\")")
endif()
install(FILES ${TORCHDOCK_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${TORCHDOCK_BASH_COMPLETION} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${TORCHDOCK_ZSH_COMPLETION} DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME torchdock)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "render, build and validate pinned PyTorch-CUDA container images")
set(CPACK_PACKAGE_CONTACT "torchdock maintainers <torchdock@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# build needs a Docker client with BuildKit; render, explain, diff and kb refresh need none.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "docker.io")
# The sandbox tier (images read without an engine) runs probes under bubblewrap; squashfs:
# images are read with unsquashfs.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bubblewrap, squashfs-tools")
# CPackDeb puts the summary first and indents the rest.
set(CPACK_PACKAGE_DESCRIPTION "torchdock renders deterministic, fully pinned Dockerfiles from version
manifests, builds them with BuildKit and validates images with probe programs
run inside them.")
include(CPack)
