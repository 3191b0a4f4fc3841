func runStoreBenchmark(_ arguments: [String]) async {}
/// Child process of the durability test: writes cards until killed.
func runStoreCrashWriter(_ arguments: [String]) async {}
