# The bench pages' tests build their rows with src/bench (bench_row, aggregate) from real reports.
add_kernelopt_test(test_report test_report_bench_html.cpp test_report_bench_markdown.cpp test_report_report.cpp)
target_link_libraries(test_report PRIVATE kernelopt_bench)
