# lipgnn depth-study: the accuracy-against-depth grid, through tests/test_depth.sh.
# A file system without locks (fcntl's F_SETLK failing with ENOLCK), by LD_PRELOAD.
add_library(lg_fake_nolock SHARED ${CMAKE_CURRENT_SOURCE_DIR}/fake_nolock.c)
target_link_libraries(lg_fake_nolock PRIVATE ${CMAKE_DL_LIBS})
if(LG_SANITIZE)
  # a preloaded library must not pull in the sanitizer runtime after the program
  target_compile_options(lg_fake_nolock PRIVATE -fno-sanitize=all)
  target_link_options(lg_fake_nolock PRIVATE -fno-sanitize=all)
endif()
add_test(NAME cli_depth_study
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_depth.sh $<TARGET_FILE:lipgnn> ${CMAKE_CURRENT_BINARY_DIR}
                 $<TARGET_FILE:lg_fake_nolock>)
set_tests_properties(cli_depth_study PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
