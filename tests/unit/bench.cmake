# Tests of src/bench (the harnesses' own library, above the engine).
add_kernelopt_test(test_bench test_bench_bench.cpp test_bench_rows.cpp test_bench_aggregate.cpp test_bench_bench_gpus.cpp
                   test_bench_adversarial.cpp)
target_link_libraries(test_bench PRIVATE kernelopt_bench)
