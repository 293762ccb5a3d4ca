add_kernelopt_test(test_engine test_engine_bench.cpp test_engine_bench_gpus.cpp test_engine_library_use.cpp
                   test_engine_adversarial.cpp test_engine_search.cpp)
