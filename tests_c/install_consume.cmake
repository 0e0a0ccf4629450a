# Install-and-consume test, run by ctest in two steps:
#   -DSTEP=install : configure + build + install the top-level project into WORK/prefix
#   -DSTEP=consume -DVARIANT=shared|static : configure, build and run tests_c/consumer
#                    against WORK/prefix with find_package(StreamAlloc)
#   -DSTEP=pkgconfig -DVARIANT=shared|static : compile and run tests_c/consumer/main.c and
#                    every C++ shim together (tests_c/shims) with the flags of
#                    stream_alloc.pc / stream_alloc_static.pc (skipped without pkg-config)
# Inputs: SOURCE_DIR (repository root), WORK (scratch directory), PROFILE (cargo profile),
# GENERATOR, C_COMPILER, CXX_COMPILER.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}")
  endif()
endfunction()

set(prefix "${WORK}/prefix")
if(STEP STREQUAL "install")
  file(REMOVE_RECURSE "${WORK}")
  run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK}/build" -G "${GENERATOR}"
      "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DSTREAM_ALLOC_CARGO_PROFILE=${PROFILE}"
      "-DCMAKE_INSTALL_PREFIX=${prefix}" -DCMAKE_INSTALL_LIBDIR=lib)
  run("${CMAKE_COMMAND}" --build "${WORK}/build")
  run("${CMAKE_COMMAND}" --install "${WORK}/build")
  # The installed layout: real file, SONAME link, dev link, static lib, header, config.
  file(GLOB real "${prefix}/lib/libstream_alloc.so.*.*.*")
  if(NOT real)
    message(FATAL_ERROR "no versioned libstream_alloc.so.X.Y.Z under ${prefix}/lib")
  endif()
  foreach(link libstream_alloc.so.0 libstream_alloc.so)
    if(NOT IS_SYMLINK "${prefix}/lib/${link}")
      message(FATAL_ERROR "${prefix}/lib/${link} is not a symlink")
    endif()
  endforeach()
  foreach(f bin/stream-alloc lib/libstream_alloc.a include/stream_alloc.h include/stream_alloc/graph.h
            include/stream_alloc/allocation.h include/stream_alloc/session.h include/stream_alloc/summary.h
            include/stream_alloc/runtime_pools.h include/stream_alloc/mem_pool.h include/stream_alloc/errors.h
            lib/cmake/StreamAlloc/StreamAllocConfig.cmake
            lib/cmake/StreamAlloc/StreamAllocConfigVersion.cmake
            lib/pkgconfig/stream_alloc.pc lib/pkgconfig/stream_alloc_static.pc
            include/stream_alloc/ge_compat/stream_alloc_ge_status.h
            include/stream_alloc/ge_compat/stream_alloc_ge_types.h
            include/stream_alloc/ge_compat/framework/runtime/stream_allocator.h
            include/stream_alloc/ge_compat/framework/runtime/event_allocator.h
            include/stream_alloc/ge_compat/framework/runtime/notify_allocator.h
            include/stream_alloc/ge_compat/framework/runtime/mem_pool.h
            include/stream_alloc/ge_compat/graph/load/model_manager/reusable_stream_allocator.h
            include/stream_alloc/ge_compat/ge/ge_graph_compile_summary.h)
    if(NOT EXISTS "${prefix}/${f}")
      message(FATAL_ERROR "${prefix}/${f} was not installed")
    endif()
  endforeach()
  # The installed tool runs from the prefix (it links the library statically).
  run("${prefix}/bin/stream-alloc" --version)
  # The shims live under the project's own directory, never where a GE installation's are.
  foreach(d framework graph ge)
    if(EXISTS "${prefix}/include/${d}")
      message(FATAL_ERROR "${prefix}/include/${d} was installed: GE's header folders belong to GE")
    endif()
  endforeach()
  # No build type given: the library is cargo's release build (no debug assertions, optimised).
  if(PROFILE STREQUAL "release")
    file(SIZE "${real}" so_size)
    message(STATUS "installed ${real}: ${so_size} bytes")
  endif()
  find_program(READELF readelf)
  if(READELF)
    execute_process(COMMAND "${READELF}" -d "${real}" OUTPUT_VARIABLE dyn)
    if(NOT dyn MATCHES "SONAME\\)[^\n]*\\[libstream_alloc\\.so\\.0\\]")
      message(FATAL_ERROR "${real} has no SONAME libstream_alloc.so.0:\n${dyn}")
    endif()
  endif()
elseif(STEP STREQUAL "consume")
  if(VARIANT STREQUAL "static")
    set(static ON)
  else()
    set(static OFF)
  endif()
  set(build "${WORK}/consumer-${VARIANT}")
  file(REMOVE_RECURSE "${build}")
  run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/tests_c/consumer" -B "${build}" -G "${GENERATOR}"
      "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
      "-DCMAKE_PREFIX_PATH=${prefix}" "-DSTREAM_ALLOC_STATIC=${static}")
  run("${CMAKE_COMMAND}" --build "${build}")
  run("${build}/consumer_c")
  run("${build}/consumer_cxx")
  run("${build}/consumer_shims")
  find_program(READELF readelf)
  if(READELF)
    execute_process(COMMAND "${READELF}" -d "${build}/consumer_c" OUTPUT_VARIABLE dyn)
    if(static AND dyn MATCHES "libstream_alloc")
      message(FATAL_ERROR "the static consumer depends on the shared library:\n${dyn}")
    endif()
    if(NOT static AND NOT dyn MATCHES "NEEDED\\)[^\n]*\\[libstream_alloc\\.so\\.0\\]")
      message(FATAL_ERROR "the shared consumer does not need libstream_alloc.so.0:\n${dyn}")
    endif()
  endif()
elseif(STEP STREQUAL "pkgconfig")
  find_program(PKG_CONFIG pkg-config)
  if(NOT PKG_CONFIG)
    message(STATUS "SKIP: no pkg-config")
    return()
  endif()
  if(VARIANT STREQUAL "static")
    set(pc stream_alloc_static)
  else()
    set(pc stream_alloc)
  endif()
  set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
  execute_process(COMMAND "${PKG_CONFIG}" --cflags ${pc} OUTPUT_VARIABLE cflags RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND "${PKG_CONFIG}" --libs ${pc} OUTPUT_VARIABLE libs RESULT_VARIABLE rc2
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR NOT rc2 EQUAL 0)
    message(FATAL_ERROR "pkg-config ${pc} failed")
  endif()
  separate_arguments(cflags UNIX_COMMAND "${cflags}")
  separate_arguments(libs UNIX_COMMAND "${libs}")
  set(build "${WORK}/pkgconfig-${VARIANT}")
  file(REMOVE_RECURSE "${build}")
  file(MAKE_DIRECTORY "${build}")
  # The shared variant runs with the prefix's lib/ on its RUNPATH, as an application would set.
  set(rpath "")
  if(NOT VARIANT STREQUAL "static")
    set(rpath "-Wl,-rpath,${prefix}/lib")
  endif()
  run("${C_COMPILER}" -std=c11 -Wall -Wextra -Werror ${cflags} "${SOURCE_DIR}/tests_c/consumer/main.c"
      -o "${build}/consumer_c" ${libs} ${rpath})
  run("${CXX_COMPILER}" -std=c++11 -Wall -Wextra -Wpedantic -Werror ${cflags}
      "${SOURCE_DIR}/tests_c/shims/order_a.cpp" "${SOURCE_DIR}/tests_c/shims/order_b.cpp"
      -o "${build}/shims_together" ${libs} ${rpath})
  run("${build}/consumer_c")
  run("${build}/shims_together")
  find_program(READELF readelf)
  if(READELF)
    execute_process(COMMAND "${READELF}" -d "${build}/consumer_c" OUTPUT_VARIABLE dyn)
    if(VARIANT STREQUAL "static" AND dyn MATCHES "libstream_alloc")
      message(FATAL_ERROR "the pkg-config static consumer depends on the shared library:\n${dyn}")
    endif()
    if(NOT VARIANT STREQUAL "static" AND NOT dyn MATCHES "NEEDED\\)[^\n]*\\[libstream_alloc\\.so\\.0\\]")
      message(FATAL_ERROR "the pkg-config shared consumer does not need libstream_alloc.so.0:\n${dyn}")
    endif()
  endif()
else()
  message(FATAL_ERROR "STEP must be install, consume or pkgconfig")
endif()
