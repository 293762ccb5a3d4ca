add_kernelopt_test(test_util
  test_util_subprocess.cpp
  test_util_hash.cpp
  test_util_fs.cpp
  test_util_log.cpp
  test_util_lock_file.cpp)
set_tests_properties(test_util PROPERTIES TIMEOUT 60)
