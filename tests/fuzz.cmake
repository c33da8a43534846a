# The fuzz harnesses (tests/fuzz) replayed without libFuzzer on their seed
# corpora and on the inputs of past findings (tests/fuzz/regressions/<harness>).
# The fuzzing itself: tools/fuzz.sh (clang, -DLG_FUZZ=ON).
set(LG_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
foreach(h mtx dataset checkpoint cli)
  set(extra)
  if(h STREQUAL "cli")
    set(extra $<TARGET_OBJECTS:lg_cli_objects>)
  endif()
  add_executable(fuzz_replay_${h} ${LG_FUZZ_DIR}/fuzz_${h}.c ${LG_FUZZ_DIR}/fuzz_util.c ${LG_FUZZ_DIR}/replay.c ${extra})
  target_link_libraries(fuzz_replay_${h} PRIVATE lg_internal)
  set(inputs ${LG_FUZZ_DIR}/corpus/${h})
  if(EXISTS ${LG_FUZZ_DIR}/regressions/${h})
    list(APPEND inputs ${LG_FUZZ_DIR}/regressions/${h})
  endif()
  add_test(NAME fuzz_replay_${h} COMMAND fuzz_replay_${h} ${inputs})
  set_tests_properties(fuzz_replay_${h} PROPERTIES TIMEOUT 300 LABELS fuzz)
endforeach()
