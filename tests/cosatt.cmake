# test_cosatt also compiles the naive cosine-attention oracle (tests/cosatt_naive.c)
# and the shared test graphs (tests/testgraph.c).
if(TARGET test_cosatt)
  target_sources(test_cosatt PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cosatt_naive.c ${CMAKE_CURRENT_SOURCE_DIR}/testgraph.c)
endif()
