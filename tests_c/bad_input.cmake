# The bad-input table through the C ABI: one ctest per row of tests/fixtures/bad_input/table.tsv,
# plus the ABI-misuse checks; again under ASan/LSan/UBSan where the compiler has them.
set(SA_BAD_DIR "${CMAKE_CURRENT_SOURCE_DIR}/../tests/fixtures/bad_input")
file(STRINGS "${SA_BAD_DIR}/table.tsv" SA_BAD_ROWS REGEX "^[a-z]")
set(SA_BAD_VARIANTS test_bad_input)
if(SA_HAVE_ASAN)
  list(APPEND SA_BAD_VARIANTS test_bad_input_asan)
endif()
foreach(v IN LISTS SA_BAD_VARIANTS)
  add_executable(${v} test_bad_input.c)
  target_link_libraries(${v} PRIVATE StreamAlloc::stream_alloc)
  set_target_properties(${v} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_compile_options(${v} PRIVATE ${SA_WARNINGS})
  target_compile_definitions(${v} PRIVATE _POSIX_C_SOURCE=200809L)
  if(v MATCHES "_asan$")
    target_compile_options(${v} PRIVATE -g -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${v} PRIVATE -fsanitize=address,undefined)
  endif()
  add_test(NAME ${v}_misuse COMMAND ${v} "${SA_BAD_DIR}")
  set(tests ${v}_misuse)
  foreach(line IN LISTS SA_BAD_ROWS)
    string(REGEX MATCH "^[a-z0-9_]+" id "${line}")
    add_test(NAME ${v}_${id} COMMAND ${v} "${SA_BAD_DIR}" "${id}")
    list(APPEND tests ${v}_${id})
  endforeach()
  if(v MATCHES "_asan$")
    set_tests_properties(${tests} PROPERTIES ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1;UBSAN_OPTIONS=halt_on_error=1")
  endif()
endforeach()

# Proof that the sanitizer configuration instruments: the ASan build carries the runtime's
# symbols, and a deliberate heap overflow built the same way is caught.
if(SA_HAVE_ASAN)
  add_executable(asan_canary asan_canary.c)
  target_compile_options(asan_canary PRIVATE -g -fsanitize=address,undefined -fno-omit-frame-pointer)
  target_link_options(asan_canary PRIVATE -fsanitize=address,undefined)
  add_test(NAME asan_canary_overflow_is_caught COMMAND asan_canary)
  set_tests_properties(asan_canary_overflow_is_caught PROPERTIES WILL_FAIL FALSE
    PASS_REGULAR_EXPRESSION "heap-buffer-overflow")
  add_test(NAME asan_instrumented
    COMMAND sh -c "nm \"$1\" | grep -q __asan_report_load && nm \"$1\" | grep -q __ubsan_handle" sh
            $<TARGET_FILE:test_bad_input_asan>)
endif()
