DROP TABLE runs;
DROP TABLE benchmarks;
