# test_core again under an OMP_NUM_THREADS beyond INT_MAX, which libgomp takes
# and wraps into its int (omp_get_max_threads() -2147483648): lg_set_threads(0)
# must still return the count in effect (test_set_threads).
add_test(NAME core_threads_wrapped COMMAND test_core)
set_tests_properties(core_threads_wrapped PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
                     ENVIRONMENT "OMP_NUM_THREADS=2147483648")
