# Builds the Rust library with cargo and stages it for CMake consumers in the build tree.
#
# Include after project(). Inputs (cache variables):
#   STREAM_ALLOC_SOURCE_DIR    the repository root (default: the directory above this file)
#   STREAM_ALLOC_CARGO_PROFILE debug or release (default: release for Release/RelWithDebInfo/
#                              MinSizeRel builds, debug otherwise; the top-level project makes
#                              Release the build type when none is given)
#   STREAM_ALLOC_GLIBCXX_OLD_ABI  ON: the library's C++ unit (GE's allocator classes) is built
#                              with -D_GLIBCXX_USE_CXX11_ABI=0 (cargo feature glibcxx-old-abi)
#   CARGO_TARGET_DIR (env)     honoured; otherwise the repository's target/, so builds share
#                              cargo's cache with `cargo build` / `cargo test`
# Defines:
#   stream_alloc_cargo                       custom target: cargo build --lib --bins + staging
#                                            (the library and the stream-alloc tool)
#   StreamAlloc::stream_alloc                the shared library (SONAME libstream_alloc.so.0)
#   StreamAlloc::stream_alloc_static         the static library (+ the system libs Rust needs)
#   STREAM_ALLOC_CARGO_TARGET_DIR            cargo's target directory (CARGO_TARGET_DIR or target/)
#   STREAM_ALLOC_VERSION, STREAM_ALLOC_STAGE_DIR, STREAM_ALLOC_INCLUDE_DIR (stream_alloc.h),
#   STREAM_ALLOC_TOOL (the staged stream-alloc command-line tool),
#   STREAM_ALLOC_GE_COMPAT_INCLUDE_DIR (the C++ shims at GE's header paths); both targets
#   carry both include directories
# cargo decides what is stale, so the custom target always runs; staging copies only files
# whose content changed, so dependents relink only when the library changed.

get_filename_component(_sa_default_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(STREAM_ALLOC_SOURCE_DIR "${_sa_default_root}" CACHE PATH "stream-alloc repository root")

if(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo|MinSizeRel)$")
  set(_sa_default_profile release)
else()
  set(_sa_default_profile debug)
endif()
set(STREAM_ALLOC_CARGO_PROFILE "${_sa_default_profile}" CACHE STRING "cargo profile: debug or release")
set_property(CACHE STREAM_ALLOC_CARGO_PROFILE PROPERTY STRINGS debug release)
if(NOT STREAM_ALLOC_CARGO_PROFILE MATCHES "^(debug|release)$")
  message(FATAL_ERROR "STREAM_ALLOC_CARGO_PROFILE must be debug or release, got '${STREAM_ALLOC_CARGO_PROFILE}'")
endif()

find_program(CARGO_EXECUTABLE cargo HINTS "$ENV{CARGO_HOME}/bin" "$ENV{HOME}/.cargo/bin" REQUIRED)

file(STRINGS "${STREAM_ALLOC_SOURCE_DIR}/Cargo.toml" _sa_version_line REGEX "^version = \"[0-9]+\\.[0-9]+\\.[0-9]+\"" LIMIT_COUNT 1)
string(REGEX REPLACE "^version = \"([0-9.]+)\".*" "\\1" STREAM_ALLOC_VERSION "${_sa_version_line}")
if(NOT STREAM_ALLOC_VERSION)
  message(FATAL_ERROR "cannot read the package version from ${STREAM_ALLOC_SOURCE_DIR}/Cargo.toml")
endif()
string(REGEX MATCH "^[0-9]+" STREAM_ALLOC_SOVERSION "${STREAM_ALLOC_VERSION}")

if(DEFINED ENV{CARGO_TARGET_DIR} AND NOT "$ENV{CARGO_TARGET_DIR}" STREQUAL "")
  get_filename_component(STREAM_ALLOC_CARGO_TARGET_DIR "$ENV{CARGO_TARGET_DIR}" ABSOLUTE BASE_DIR "${STREAM_ALLOC_SOURCE_DIR}")
else()
  set(STREAM_ALLOC_CARGO_TARGET_DIR "${STREAM_ALLOC_SOURCE_DIR}/target")
endif()
set(_sa_cargo_out "${STREAM_ALLOC_CARGO_TARGET_DIR}/${STREAM_ALLOC_CARGO_PROFILE}")
set(_sa_cargo_flags build --lib --bins --manifest-path "${STREAM_ALLOC_SOURCE_DIR}/Cargo.toml" --target-dir "${STREAM_ALLOC_CARGO_TARGET_DIR}")
if(STREAM_ALLOC_CARGO_PROFILE STREQUAL "release")
  list(APPEND _sa_cargo_flags --release)
endif()
option(STREAM_ALLOC_GLIBCXX_OLD_ABI "build the library's C++ unit with -D_GLIBCXX_USE_CXX11_ABI=0" OFF)
if(STREAM_ALLOC_GLIBCXX_OLD_ABI)
  list(APPEND _sa_cargo_flags --features glibcxx-old-abi)
endif()

set(STREAM_ALLOC_STAGE_DIR "${CMAKE_BINARY_DIR}/stream_alloc/lib")
set(STREAM_ALLOC_TOOL "${CMAKE_BINARY_DIR}/stream_alloc/bin/stream-alloc")
set(STREAM_ALLOC_INCLUDE_DIR "${STREAM_ALLOC_SOURCE_DIR}/include")
set(STREAM_ALLOC_GE_COMPAT_INCLUDE_DIR "${STREAM_ALLOC_INCLUDE_DIR}/stream_alloc/ge_compat")
set(_sa_real "libstream_alloc.so.${STREAM_ALLOC_VERSION}")
set(_sa_soname "libstream_alloc.so.${STREAM_ALLOC_SOVERSION}")

add_custom_target(stream_alloc_cargo
  COMMAND "${CARGO_EXECUTABLE}" ${_sa_cargo_flags}
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${STREAM_ALLOC_STAGE_DIR}"
  COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${_sa_cargo_out}/libstream_alloc.so" "${STREAM_ALLOC_STAGE_DIR}/${_sa_real}"
  COMMAND "${CMAKE_COMMAND}" -E create_symlink "${_sa_real}" "${STREAM_ALLOC_STAGE_DIR}/${_sa_soname}"
  COMMAND "${CMAKE_COMMAND}" -E create_symlink "${_sa_soname}" "${STREAM_ALLOC_STAGE_DIR}/libstream_alloc.so"
  COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${_sa_cargo_out}/libstream_alloc.a" "${STREAM_ALLOC_STAGE_DIR}/libstream_alloc.a"
  COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${_sa_cargo_out}/stream-alloc" "${STREAM_ALLOC_TOOL}"
  BYPRODUCTS "${STREAM_ALLOC_STAGE_DIR}/${_sa_real}" "${STREAM_ALLOC_STAGE_DIR}/libstream_alloc.a" "${STREAM_ALLOC_TOOL}"
  WORKING_DIRECTORY "${STREAM_ALLOC_SOURCE_DIR}"
  COMMENT "cargo build --lib --bins (${STREAM_ALLOC_CARGO_PROFILE}) of stream-alloc"
  VERBATIM USES_TERMINAL)

include("${CMAKE_CURRENT_LIST_DIR}/StreamAllocLinkLibs.cmake")

if(NOT TARGET StreamAlloc::stream_alloc)
  add_library(StreamAlloc::stream_alloc SHARED IMPORTED GLOBAL)
  set_target_properties(StreamAlloc::stream_alloc PROPERTIES
    IMPORTED_LOCATION "${STREAM_ALLOC_STAGE_DIR}/${_sa_real}"
    IMPORTED_SONAME "${_sa_soname}"
    INTERFACE_INCLUDE_DIRECTORIES "${STREAM_ALLOC_INCLUDE_DIR};${STREAM_ALLOC_GE_COMPAT_INCLUDE_DIR}")
  add_dependencies(StreamAlloc::stream_alloc stream_alloc_cargo)

  add_library(StreamAlloc::stream_alloc_static STATIC IMPORTED GLOBAL)
  set_target_properties(StreamAlloc::stream_alloc_static PROPERTIES
    IMPORTED_LOCATION "${STREAM_ALLOC_STAGE_DIR}/libstream_alloc.a"
    IMPORTED_LINK_INTERFACE_LANGUAGES C
    INTERFACE_INCLUDE_DIRECTORIES "${STREAM_ALLOC_INCLUDE_DIR};${STREAM_ALLOC_GE_COMPAT_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${STREAM_ALLOC_STATIC_LINK_LIBS}")
  add_dependencies(StreamAlloc::stream_alloc_static stream_alloc_cargo)
endif()
