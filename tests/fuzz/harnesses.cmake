# The fuzz harnesses, for tests/fuzz/CMakeLists.txt (libFuzzer executables,
# -DLG_FUZZ=ON) and tests/fuzz.cmake (replay executables for ctest).
set(LG_FUZZ_HARNESSES mtx dataset checkpoint cli)

# lg_fuzz_executable(TARGET HARNESS [SOURCES...]): harness HARNESS with its
# helpers (and the CLI objects for cli) plus SOURCES.
function(lg_fuzz_executable target h)
  set(dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  set(extra ${ARGN})
  if(h STREQUAL "cli")
    list(APPEND extra $<TARGET_OBJECTS:lg_cli_objects>)
  endif()
  add_executable(${target} ${dir}/fuzz_${h}.c ${dir}/fuzz_util.c ${extra})
  target_link_libraries(${target} PRIVATE lg_internal)
endfunction()
