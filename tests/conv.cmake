# test_conv compiles the naive per-node oracle of the baseline layers
# (tests/conv_naive.c) and the shared test graphs (tests/testgraph.c).
if(TARGET test_conv)
  target_sources(test_conv PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/conv_naive.c ${CMAKE_CURRENT_SOURCE_DIR}/testgraph.c)
endif()
