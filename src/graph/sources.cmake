list(APPEND LG_SOURCES src/graph/graph.c src/graph/igraph_bridge.c)
