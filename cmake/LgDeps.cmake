# Finds lipgnn's dependencies, all Debian packages, and stops with a message
# naming the missing package. Each becomes an imported target LG::<name>.
find_package(PkgConfig)

function(lg_missing what pkg)
  message(FATAL_ERROR "lipgnn: ${what} not found. Install the Debian package '${pkg}' "
                      "(tools/install-deps.sh installs every dependency).")
endfunction()

# OpenMP (gcc's libgomp)
find_package(OpenMP COMPONENTS C)
if(NOT OpenMP_C_FOUND)
  lg_missing("OpenMP for C" "gcc (libgomp1)")
endif()

# OpenBLAS: pkg-config 'openblas' from libopenblas-dev
if(PkgConfig_FOUND)
  pkg_check_modules(LG_OPENBLAS QUIET IMPORTED_TARGET openblas)
endif()
if(LG_OPENBLAS_FOUND)
  add_library(LG::openblas ALIAS PkgConfig::LG_OPENBLAS)
else()
  find_path(LG_OPENBLAS_INC cblas.h PATH_SUFFIXES openblas-pthread openblas x86_64-linux-gnu/openblas-pthread)
  find_library(LG_OPENBLAS_LIB openblas PATH_SUFFIXES openblas-pthread)
  if(NOT LG_OPENBLAS_INC OR NOT LG_OPENBLAS_LIB)
    lg_missing("OpenBLAS" "libopenblas-dev")
  endif()
  add_library(LG::openblas INTERFACE IMPORTED)
  set_target_properties(LG::openblas PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${LG_OPENBLAS_INC}
                                                INTERFACE_LINK_LIBRARIES ${LG_OPENBLAS_LIB})
endif()

# CXSparse (SuiteSparse): no pkg-config file, so find header and library
find_path(LG_CXSPARSE_INC cs.h PATH_SUFFIXES suitesparse)
find_library(LG_CXSPARSE_LIB cxsparse)
if(NOT LG_CXSPARSE_INC OR NOT LG_CXSPARSE_LIB)
  lg_missing("CXSparse (cs.h, libcxsparse)" "libsuitesparse-dev")
endif()
add_library(LG::cxsparse INTERFACE IMPORTED)
set_target_properties(LG::cxsparse PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${LG_CXSPARSE_INC}
                                              INTERFACE_LINK_LIBRARIES ${LG_CXSPARSE_LIB})

# igraph: pkg-config 'igraph' from libigraph-dev
if(PkgConfig_FOUND)
  pkg_check_modules(LG_IGRAPH QUIET IMPORTED_TARGET igraph)
endif()
if(NOT LG_IGRAPH_FOUND)
  lg_missing("igraph" "libigraph-dev")
endif()
add_library(LG::igraph ALIAS PkgConfig::LG_IGRAPH)

# cmocka (tests only)
if(LG_BUILD_TESTS)
  if(PkgConfig_FOUND)
    pkg_check_modules(LG_CMOCKA QUIET IMPORTED_TARGET cmocka)
  endif()
  if(NOT LG_CMOCKA_FOUND)
    lg_missing("cmocka" "libcmocka-dev")
  endif()
  add_library(LG::cmocka ALIAS PkgConfig::LG_CMOCKA)
endif()
