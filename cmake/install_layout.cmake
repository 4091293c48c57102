# Where things live, as paths relative to a prefix. The same relative layout is used twice:
# installed (<prefix>/bin/torchdock, <prefix>/share/torchdock/data, ...) and in the build tree
# (build/<preset>/bin/torchdock, build/<preset>/share/torchdock/data -> the source data/, ...),
# so the binary finds its data and probes by one rule, relative to itself, in both. Only the
# relative paths below are compiled in; no absolute path of the build or install tree is.
include(GNUInstallDirs)
set(TORCHDOCK_BIN_DIR ${CMAKE_INSTALL_BINDIR})
set(TORCHDOCK_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/torchdock)          # data/, manifests/
set(TORCHDOCK_PROBES_DIR ${CMAKE_INSTALL_LIBEXECDIR}/torchdock/probes)
foreach(dir TORCHDOCK_BIN_DIR TORCHDOCK_SHARE_DIR TORCHDOCK_PROBES_DIR)
  if(IS_ABSOLUTE "${${dir}}")
    message(FATAL_ERROR "${dir} is ${${dir}}: torchdock needs install directories relative to the "
                        "prefix (CMAKE_INSTALL_BINDIR, _DATADIR, _LIBEXECDIR), so it can find its "
                        "data relative to its binary")
  endif()
endforeach()
# "../share/torchdock/data" and "../libexec/torchdock/probes": from the binary's directory.
file(RELATIVE_PATH TORCHDOCK_DATA_FROM_BIN /prefix/${TORCHDOCK_BIN_DIR} /prefix/${TORCHDOCK_SHARE_DIR}/data)
file(RELATIVE_PATH TORCHDOCK_PROBES_FROM_BIN /prefix/${TORCHDOCK_BIN_DIR} /prefix/${TORCHDOCK_PROBES_DIR})

# The build tree's copy of the layout. The knowledge base is a link to the source data/, so
# `kb refresh` run from the build tree updates the files under version control.
set(TORCHDOCK_BUILD_BIN_DIR ${PROJECT_BINARY_DIR}/${TORCHDOCK_BIN_DIR})
set(PROBES_OUTPUT_DIR ${PROJECT_BINARY_DIR}/${TORCHDOCK_PROBES_DIR})
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/${TORCHDOCK_SHARE_DIR})
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/data ${PROJECT_BINARY_DIR}/${TORCHDOCK_SHARE_DIR}/data SYMBOLIC)
# build/<preset>/probes-bin was the probe directory before this layout; kept as a link for
# scripts and branches written against it.
file(MAKE_DIRECTORY ${PROBES_OUTPUT_DIR})
if(IS_DIRECTORY ${PROJECT_BINARY_DIR}/probes-bin AND NOT IS_SYMLINK ${PROJECT_BINARY_DIR}/probes-bin)
  file(REMOVE_RECURSE ${PROJECT_BINARY_DIR}/probes-bin)  # a build tree from before this layout
endif()
file(CREATE_LINK ${TORCHDOCK_PROBES_DIR} ${PROJECT_BINARY_DIR}/probes-bin SYMBOLIC)
