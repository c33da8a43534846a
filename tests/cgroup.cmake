# test_cgroup tests a function of the command-line tool (lg_cli_cgroup_memory,
# src/cli/common.c): it links the tool's objects, as the CLI fuzz harness does.
target_sources(test_cgroup PRIVATE $<TARGET_OBJECTS:lg_cli_objects>)
