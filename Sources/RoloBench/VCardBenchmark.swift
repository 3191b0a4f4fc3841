func runVCardBenchmark(_ arguments: [String]) {}
