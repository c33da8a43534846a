# test_gat also compiles the naive GAT oracle (tests/gat_naive.c) and the
# shared test graphs (tests/testgraph.c).
if(TARGET test_gat)
  target_sources(test_gat PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/gat_naive.c ${CMAKE_CURRENT_SOURCE_DIR}/testgraph.c)
endif()
